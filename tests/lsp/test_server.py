"""The language server driven as an editor drives it (pytest-lsp, over
pygls's client), on a git copy of a real repository that tests/it/lsp.rs
makes: HOMELAB_LINT_BIN is the binary, LSP_REPO the copy. The copy's
CloudNativePG cluster keeps three instances on `${CLUSTER_STORAGE_CLASS}`
(ceph-block, a replicated class), which the linter reports.
"""

import asyncio
import os
import pathlib
import re

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features
from pygls.protocol import default_converter

BIN = os.environ["HOMELAB_LINT_BIN"]
REPO = pathlib.Path(os.environ["LSP_REPO"])
CLUSTER = REPO / "kubernetes/apps/databases/cloudnative-pg/cluster/cluster.yaml"
KS = REPO / "kubernetes/apps/databases/cloudnative-pg/ks.yaml"
SETTINGS = REPO / "kubernetes/flux/vars/cluster-settings.yaml"
RULE = "postgres-replicas-on-replicated-storage"
# Generous: a safety net for a hung server, not a speed check.
PATIENCE = 300


def published(client: LanguageClient, params: types.PublishDiagnosticsParams):
    """Every publishDiagnostics in order, not only each file's last."""
    client.diagnostics[params.uri] = params.diagnostics
    client.published = getattr(client, "published", []) + [params]


def registered(client: LanguageClient, params: types.RegistrationParams):
    """What the server asks to be told of (file watchers)."""
    client.registrations = getattr(client, "registrations", []) + list(params.registrations)


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=default_converter)
    features = dict(DEFAULT_CLIENT_FEATURES)
    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = published
    features[types.CLIENT_REGISTER_CAPABILITY] = registered
    register_lsp_features(client, features)
    return client


SERVER = ClientServerConfig(server_command=[BIN, "server"], client_factory=make_client)


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    """A client that does not watch files: the server reads the disk at
    every lint."""
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=REPO.as_uri(),
        )
    )
    yield
    await lsp_client.shutdown_session()


WATCHING = types.ClientCapabilities(
    workspace=types.WorkspaceClientCapabilities(
        did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
            dynamic_registration=True
        )
    )
)


@pytest_lsp.fixture(config=SERVER)
async def watching(lsp_client: LanguageClient):
    """A client that watches files for the server, which then reads only
    what it is told changed."""
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=WATCHING,
            root_uri=REPO.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=REPO.as_uri(), name="repo")],
        )
    )
    yield
    await lsp_client.shutdown_session()


class Buffer:
    """A file open in the client, with its version and text."""

    def __init__(self, client: LanguageClient, path: pathlib.Path, text: str | None = None):
        self.client = client
        self.uri = path.as_uri()
        self.text = path.read_text() if text is None else text
        self.version = 1
        self.seen = len(self.published())
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=self.uri, language_id="yaml", version=1, text=self.text
                )
            )
        )

    def published(self):
        return [p for p in getattr(self.client, "published", []) if p.uri == self.uri]

    def change(self, text: str):
        self.version += 1
        self.text = text
        self.expect()
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=self.uri, version=self.version
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def edit(self, start: types.Position, end: types.Position, text: str):
        """One small change, as an editor sends a keystroke: the range it
        replaces and what it writes there."""
        self.version += 1
        self.text = self.text[: self.offset(start)] + text + self.text[self.offset(end) :]
        self.expect()
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=self.uri, version=self.version
                ),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(start=start, end=end), text=text
                    )
                ],
            )
        )

    def offset(self, at: types.Position) -> int:
        """The index in `text` of a protocol position (UTF-16 columns)."""
        start = sum(len(line) + 1 for line in self.text.split("\n")[: at.line])
        line = self.text.split("\n")[at.line]
        units = line.encode("utf-16-le")[: 2 * at.character].decode("utf-16-le")
        return start + len(units)

    def expect(self):
        """Makes `diagnostics` wait for a publish after this one."""
        self.seen = len(self.published())

    async def diagnostics(self):
        """The diagnostics published for it after the last open or change."""
        for _ in range(PATIENCE * 20):
            fresh = self.published()[self.seen :]
            if fresh:
                self.seen = len(self.published())
                return fresh[-1].diagnostics
            await asyncio.sleep(0.05)
        raise AssertionError(f"no diagnostics were published for {self.uri}")

    async def hover(self, needle: str, skip: int = 0):
        """The hover `skip` characters into the first `needle`."""
        at = self.position(needle, skip)
        return await self.client.text_document_hover_async(
            types.HoverParams(text_document=types.TextDocumentIdentifier(uri=self.uri), position=at)
        )

    async def definition(self, needle: str, skip: int = 0):
        """Where the name `skip` characters into the first `needle` is defined."""
        at = self.position(needle, skip)
        return await self.client.text_document_definition_async(
            types.DefinitionParams(
                text_document=types.TextDocumentIdentifier(uri=self.uri), position=at
            )
        )

    def position(self, needle: str, skip: int = 0) -> types.Position:
        offset = self.text.index(needle) + skip
        line = self.text.count("\n", 0, offset)
        before = self.text[self.text.rfind("\n", 0, offset) + 1 : offset]
        return types.Position(line=line, character=len(before.encode("utf-16-le")) // 2)


async def code_actions(doc: Buffer, finding: types.Diagnostic):
    return await doc.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=doc.uri),
            range=finding.range,
            context=types.CodeActionContext(diagnostics=[finding]),
        )
    )


def ours(diagnostics, rule=RULE):
    return [d for d in diagnostics if d.code == rule]


def apply(text: str, edits: list[types.TextEdit]) -> str:
    lines = text.split("\n")

    def offset(p: types.Position) -> int:
        return sum(len(line) + 1 for line in lines[: p.line]) + p.character

    for edit in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


@pytest.mark.asyncio(loop_scope="function")
async def test_a_finding_comes_and_goes_with_the_edit(client: LanguageClient):
    doc = Buffer(client, CLUSTER)
    found = ours(await doc.diagnostics())
    # One finding, shown at each of its places in this file.
    assert len({d.data["fingerprint"] for d in found}) == 1, found
    finding = found[0]
    assert finding.range.start.line == doc.position("name: postgres").line
    assert finding.source == "homelab-lint"
    # Every other object involved, in other files, is related.
    others = {r.location.uri for r in finding.related_information}
    assert any(u != doc.uri for u in others), finding.related_information

    # One instance has no replica to wait for: the finding goes, from the
    # unsaved buffer alone.
    doc.change(doc.text.replace("instances: 3", "instances: 1"))
    assert ours(await doc.diagnostics()) == []
    assert "instances: 3" in CLUSTER.read_text()

    doc.change(doc.text.replace("instances: 1", "instances: 3"))
    assert ours(await doc.diagnostics()) == found


@pytest.mark.asyncio(loop_scope="function")
async def test_keystrokes_sent_as_small_edits_build_the_buffer(client: LanguageClient):
    """The server asks for incremental changes: a CRLF file with astral
    characters, typed into and out of one character at a time, then the
    finding's cause changed by a one-character edit. What it lints is
    what the editor holds: a server given the whole text agrees."""
    written = CLUSTER.read_text().replace("  name: postgres\n", "  name: postgres # 😀é\n")
    doc = Buffer(client, CLUSTER, written.replace("\n", "\r\n"))
    assert ours(await doc.diagnostics())
    for c in "x😀y é":
        end = doc.position("\r\n  namespace: databases")
        doc.edit(end, end, c)
    assert "😀éx😀y é\r\n" in doc.text
    for _ in "x😀y é":
        end = doc.position("\r\n  namespace: databases")
        units = len(doc.text[doc.offset(end) - 1].encode("utf-16-le")) // 2
        doc.edit(types.Position(line=end.line, character=end.character - units), end, "")
    assert "# 😀é\r\n  namespace" in doc.text
    three = doc.position("instances: 3", 11)
    doc.edit(three, types.Position(line=three.line, character=three.character + 1), "1")
    assert "instances: 1\r\n" in doc.text
    assert ours(await doc.diagnostics()) == []
    doc.edit(three, types.Position(line=three.line, character=three.character + 1), "3")
    kept = sorted_diagnostics(await doc.diagnostics())
    assert ours(kept) and doc.text == written.replace("\n", "\r\n")

    fresh = await SERVER.start()
    try:
        await fresh.initialize_session(
            types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=REPO.as_uri())
        )
        again = Buffer(fresh, CLUSTER, doc.text)
        assert sorted_diagnostics(await again.diagnostics()) == kept
    finally:
        await fresh.shutdown_session()
        await fresh.stop()


@pytest.mark.asyncio(loop_scope="function")
async def test_hover_and_definition_of_a_variable(client: LanguageClient):
    doc = Buffer(client, CLUSTER)
    await doc.diagnostics()
    hover = await doc.hover("${CLUSTER_STORAGE_CLASS}", 3)
    assert hover is not None
    text = hover.contents.value
    assert "ceph-block" in text, text
    assert "kubernetes/flux/vars/cluster-settings.yaml:" in text, text

    found = await doc.definition("${CLUSTER_STORAGE_CLASS}", 3)
    assert [loc.uri for loc in found] == [SETTINGS.as_uri()], found
    line = SETTINGS.read_text().split("\n")[found[0].range.start.line]
    assert "CLUSTER_STORAGE_CLASS" in line, line

    # On the cluster itself: what the model derives of it.
    hover = await doc.hover("kind: Cluster", 7)
    text = hover.contents.value
    assert "**Postgres** (CloudNativePG), 3 instance(s)" in text, text
    assert "`synchronous_commit` = `on`" in text, text
    assert "class `ceph-block`" in text, text


@pytest.mark.asyncio(loop_scope="function")
async def test_a_variable_in_another_ones_default_is_the_one_hovered(client: LanguageClient):
    """`${SIZE:-${CLUSTER_STORAGE_CLASS}}`: on the inner name, the inner
    variable's value and definition; on the outer one, the outer's."""
    written = CLUSTER.read_text()
    doc = Buffer(client, CLUSTER, written.replace("size: 20Gi", "size: ${SIZE:-${CLUSTER_STORAGE_CLASS}}"))
    await doc.diagnostics()
    inner = (await doc.hover("${CLUSTER_STORAGE_CLASS}}", 3)).contents.value
    assert inner.startswith("**`${CLUSTER_STORAGE_CLASS}`**"), inner
    assert "kubernetes/flux/vars/cluster-settings.yaml:" in inner, inner
    found = await doc.definition("${CLUSTER_STORAGE_CLASS}}", 3)
    assert [loc.uri for loc in found] == [SETTINGS.as_uri()], found
    outer = (await doc.hover("${SIZE", 3)).contents.value
    assert outer.startswith("**`${SIZE}`**"), outer

    # `$$` escapes: `$${NOT_A_VARIABLE}` is that text, rendered as written.
    doc.change(doc.text.replace("imageName: ", "imageName: $${NOT_A_VARIABLE}"))
    await doc.diagnostics()
    escaped = (await doc.hover("NOT_A_VARIABLE", 0)).contents.value
    assert not escaped.startswith("**`${"), escaped
    assert "renders as `${NOT_A_VARIABLE}" in escaped, escaped


@pytest.mark.asyncio(loop_scope="function")
async def test_a_variable_in_a_comment_is_said_to_be_never_substituted(client: LanguageClient):
    """`# was ${CLUSTER_STORAGE_CLASS}` in a file a Flux Kustomization
    with postBuild renders: a comment, which Flux never substitutes, not
    a file no postBuild renders."""
    written = CLUSTER.read_text().replace(
        "  instances: 3\n", "  instances: 3 # was ${CLUSTER_STORAGE_CLASS}\n"
    )
    doc = Buffer(client, CLUSTER, written)
    await doc.diagnostics()
    text = (await doc.hover("was ${CLUSTER_STORAGE_CLASS}", 7)).contents.value
    assert "in a comment" in text, text
    assert "no Flux Kustomization with `postBuild`" not in text, text
    assert await doc.definition("was ${CLUSTER_STORAGE_CLASS}", 7) == []


@pytest.mark.asyncio(loop_scope="function")
async def test_a_long_value_is_cut_in_its_hover(client: LanguageClient):
    """A large value (a dashboard kept in a ConfigMap) hovered: quoted and
    cut, with its length, rather than the whole of it."""
    long = "é" * 200_000
    doc = Buffer(client, CLUSTER, CLUSTER.read_text().replace("imageName: ", f"imageName: {long}"))
    await doc.diagnostics()
    text = (await doc.hover("imageName: ", 15)).contents.value
    assert "spec.imageName" in text, text[:300]
    assert len(text) < 2_000, text[:300]
    assert "… (400038 bytes)" in text, text[:300]


@pytest.mark.asyncio(loop_scope="function")
async def test_definition_of_a_dependency_and_a_source(client: LanguageClient):
    doc = Buffer(client, KS)
    await doc.diagnostics()
    # `dependsOn: - name: cluster-apps-cloudnative-pg` in the second
    # document names the first.
    found = await doc.definition("- name: cluster-apps-cloudnative-pg\n", 10)
    assert [loc.uri for loc in found] == [doc.uri], found
    assert found[0].range.start.line == doc.position("name: cluster-apps-cloudnative-pg\n").line

    found = await doc.definition("name: k8s-gitops", 8)
    assert len(found) == 1, found
    target = pathlib.Path(found[0].range and found[0].uri.removeprefix("file://"))
    assert "kind: GitRepository" in target.read_text(), target


@pytest.mark.asyncio(loop_scope="function")
async def test_a_suppression_applied_is_linted_again(client: LanguageClient):
    doc = Buffer(client, CLUSTER)
    finding = ours(await doc.diagnostics())[0]
    actions = await code_actions(doc, finding)
    suppress = [a for a in actions if a.title.startswith("Suppress")]
    assert len(suppress) == 1, actions
    edits = suppress[0].edit.changes[doc.uri]
    after = apply(doc.text, edits)
    assert f"# homelab-lint: ignore {RULE} -- <reason>" in after
    doc.change(after)
    assert ours(await doc.diagnostics()) == []


@pytest.mark.asyncio(loop_scope="function")
async def test_a_file_reached_through_a_symlinked_folder_is_the_repositorys(
    client: LanguageClient,
):
    """The editor opened the repository through a link (a linked project
    folder, macOS's /tmp): its files get the repository's findings, and
    an action edits the file under the name the editor opened it by."""
    link = REPO.parent / "linked-repo"
    link.symlink_to(REPO, target_is_directory=True)
    try:
        doc = Buffer(client, link / CLUSTER.relative_to(REPO))
        finding = ours(await doc.diagnostics())[0]
        hover = await doc.hover("${CLUSTER_STORAGE_CLASS}", 3)
        assert "ceph-block" in hover.contents.value, hover
        actions = await code_actions(doc, finding)
        suppress = [a for a in actions if a.title.startswith(f"Suppress {RULE}")]
        assert list(suppress[0].edit.changes) == [doc.uri], suppress
        doc.change(apply(doc.text, suppress[0].edit.changes[doc.uri]))
        assert ours(await doc.diagnostics()) == []
    finally:
        link.unlink()


@pytest.mark.asyncio(loop_scope="function")
async def test_a_malformed_buffer_is_a_diagnostic_not_a_crash(client: LanguageClient):
    doc = Buffer(client, CLUSTER)
    assert ours(await doc.diagnostics())
    doc.change("apiVersion: v1\nkind: [ConfigMap\n")
    problems = await doc.diagnostics()
    assert any(d.code == "input" for d in problems), problems
    assert ours(problems) == []
    # The server still answers, and recovers with the text.
    doc.change(CLUSTER.read_text())
    assert ours(await doc.diagnostics())


@pytest.mark.asyncio(loop_scope="function")
async def test_the_server_survives_a_file_deleted_under_it(client: LanguageClient):
    doc = Buffer(client, CLUSTER)
    assert ours(await doc.diagnostics())
    written = CLUSTER.read_text()
    SETTINGS.rename(SETTINGS.with_suffix(".moved"))
    try:
        doc.change(doc.text + "\n")
        after = await doc.diagnostics()
        # Without the variable's definition the class is unknown: no
        # finding, and the file that reads it is still linted.
        assert ours(after) == []
        CLUSTER.unlink()
        doc.change(doc.text)
        await doc.diagnostics()
        hover = await doc.hover("${CLUSTER_STORAGE_CLASS}", 3)
        assert hover is not None
    finally:
        SETTINGS.with_suffix(".moved").rename(SETTINGS)
        CLUSTER.write_text(written)


@pytest.mark.asyncio(loop_scope="function")
async def test_a_file_nothing_applies_gets_a_hint(client: LanguageClient):
    stray = REPO / "kubernetes/apps/databases/cloudnative-pg/cluster/stray.yaml"
    stray.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: stray\n")
    doc = Buffer(client, stray)
    hints = [d for d in await doc.diagnostics() if d.severity == types.DiagnosticSeverity.Hint]
    assert len(hints) == 1, hints
    assert "applied by no Flux Kustomization" in hints[0].message
    assert "kustomization.yaml" in hints[0].message, hints[0].message


EXAMPLE = pathlib.Path(os.environ["LSP_EXAMPLE_REPO"])


@pytest.mark.asyncio(loop_scope="function")
async def test_fixes_come_with_their_applicability_and_apply(client: LanguageClient):
    release = Buffer(client, EXAMPLE / "apps/authentik/helmrelease.yaml")
    rule = "authentik-persistent-connections-without-keepalives"
    finding = ours(await release.diagnostics(), rule)[0]
    actions = await code_actions(release, finding)
    hover = await release.hover("kind: HelmRelease", 8)
    assert "Helm values (`values` and `valuesFrom` merged)" in hover.contents.value
    assert "AUTHENTIK_POSTGRESQL__CONN_MAX_AGE" in hover.contents.value
    preferred = [a for a in actions if a.is_preferred]
    assert len(preferred) == 1, actions
    assert preferred[0].kind == types.CodeActionKind.QuickFix
    release.change(apply(release.text, preferred[0].edit.changes[release.uri]))
    assert ours(await release.diagnostics(), rule) == []

    database = Buffer(client, EXAMPLE / "apps/authentik/database.yaml")
    rule = "authentik-cache-on-sync-replicated-postgres"
    finding = ours(await database.diagnostics(), rule)[0]
    actions = await code_actions(database, finding)
    unsafe = [a for a in actions if "(unsafe fix)" in a.title]
    assert len(unsafe) == 1 and not unsafe[0].is_preferred, actions
    assert unsafe[0].edit is not None

    # Asked in the release, the cache finding's suppression goes where
    # the finding is reported, the database: the title says so.
    asked = await code_actions(release, ours(client.diagnostics[release.uri], rule)[0])
    suppress = [a for a in asked if a.title.startswith(f"Suppress {rule}")]
    assert [list(a.edit.changes) for a in suppress] == [[database.uri]], suppress
    assert "at apps/authentik/database.yaml:" in suppress[0].title, suppress[0].title


@pytest.mark.asyncio(loop_scope="function")
async def test_edits_in_a_crlf_file_keep_its_line_breaks(client: LanguageClient):
    """A file written on Windows: every line an action inserts ends with
    CRLF, as the command line's --fix writes it, and the finding goes."""
    path = EXAMPLE / "apps/authentik/helmrelease.yaml"
    written = path.read_text().replace("\n", "\r\n")
    release = Buffer(client, path, written)
    rule = "authentik-persistent-connections-without-keepalives"
    finding = ours(await release.diagnostics(), rule)[0]
    actions = await code_actions(release, finding)
    for action in [a for a in actions if a.is_preferred or a.title.startswith(f"Suppress {rule}")]:
        edits = action.edit.changes[release.uri]
        assert any("\n" in e.new_text for e in edits), action
        after = apply(written, edits)
        assert "\n" not in after.replace("\r\n", ""), (action.title, edits)
        release.change(after)
        assert ours(await release.diagnostics(), rule) == [], action.title
        release.change(written)
        assert ours(await release.diagnostics(), rule), action.title


def on_disk(client: LanguageClient, *changes: tuple[pathlib.Path, types.FileChangeType]):
    """Tells the server what changed on disk, as a watching client does."""
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=path.as_uri(), type=kind) for path, kind in changes]
        )
    )


def sorted_diagnostics(diagnostics):
    return sorted(
        diagnostics,
        key=lambda d: (d.range.start.line, d.range.start.character, str(d.code), d.message),
    )


@pytest.mark.asyncio(loop_scope="function")
async def test_after_edits_and_disk_changes_the_diagnostics_are_a_fresh_lints(
    watching: LanguageClient,
):
    client = watching
    for _ in range(PATIENCE * 20):
        if getattr(client, "registrations", []):
            break
        await asyncio.sleep(0.05)
    methods = [r.method for r in getattr(client, "registrations", [])]
    assert methods == [types.WORKSPACE_DID_CHANGE_WATCHED_FILES], methods
    cluster, ks = Buffer(client, CLUSTER), Buffer(client, KS)
    assert ours(await cluster.diagnostics())
    await ks.diagnostics()
    settings = SETTINGS.read_text()
    moved = REPO.parent / "cluster-settings.yaml"
    created = CLUSTER.parent / "created.yaml"

    async def after(*changes):
        cluster.expect()
        on_disk(client, *changes)
        return ours(await cluster.diagnostics())

    try:
        # An unsaved edit that keeps the finding.
        cluster.change(cluster.text.replace("instances: 3", "instances: 2"))
        assert ours(await cluster.diagnostics())
        # The variable's definition deleted on disk: the class is unknown,
        # the finding goes; back, it comes back.
        SETTINGS.rename(moved)
        assert await after((SETTINGS, types.FileChangeType.Deleted)) == []
        moved.rename(SETTINGS)
        assert await after((SETTINGS, types.FileChangeType.Created))
        # Changed on disk to a class the linter does not know: it goes.
        SETTINGS.write_text(settings.replace('"ceph-block"', '"made-up-class"'))
        assert await after((SETTINGS, types.FileChangeType.Changed)) == []
        created.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: created\n")
        await after((created, types.FileChangeType.Created))
        # One lint publishes both files.
        ks.expect()
        cluster.change(cluster.text.replace("instances: 2", "instances: 3"))
        kept = {doc.uri: sorted_diagnostics(await doc.diagnostics()) for doc in (cluster, ks)}

        # A server started now, without watching, reads it all.
        fresh = await SERVER.start()
        try:
            await fresh.initialize_session(
                types.InitializeParams(
                    capabilities=types.ClientCapabilities(), root_uri=REPO.as_uri()
                )
            )
            again = [Buffer(fresh, CLUSTER, cluster.text), Buffer(fresh, KS, ks.text)]
            for doc in again:
                assert sorted_diagnostics(await doc.diagnostics()) == kept[doc.uri], doc.uri
        finally:
            await fresh.shutdown_session()
            await fresh.stop()
    finally:
        if moved.exists():
            moved.rename(SETTINGS)
        SETTINGS.write_text(settings)
        created.unlink(missing_ok=True)


async def made_while_running_and_ignored(client: LanguageClient, watches: bool):
    """A decrypted Secret made while the editor runs, which .gitignore
    covers, and listed by a kustomization: Flux never gets it, so the
    build fails, as a server started afterwards says too. A watching
    client reports the files made; another only saves."""
    ignore = REPO / ".gitignore"
    kustomization = CLUSTER.parent / "kustomization.yaml"
    decrypted = CLUSTER.parent / "secret.dec.yaml"
    doc = Buffer(client, kustomization)
    await doc.diagnostics()
    try:
        ignore.write_text("*.dec.yaml\n")
        decrypted.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: decrypted\n")
        if watches:
            on_disk(
                client,
                (ignore, types.FileChangeType.Created),
                (decrypted, types.FileChangeType.Created),
            )
        doc.change(doc.text.replace("  - cluster.yaml\n", "  - cluster.yaml\n  - secret.dec.yaml\n"))
        if not watches:
            client.text_document_did_save(
                types.DidSaveTextDocumentParams(
                    text_document=types.TextDocumentIdentifier(uri=doc.uri)
                )
            )
        kept = sorted_diagnostics(await doc.diagnostics())
        assert any("secret.dec.yaml" in d.message for d in kept), kept

        fresh = await SERVER.start()
        try:
            await fresh.initialize_session(
                types.InitializeParams(
                    capabilities=types.ClientCapabilities(), root_uri=REPO.as_uri()
                )
            )
            again = Buffer(fresh, kustomization, doc.text)
            assert sorted_diagnostics(await again.diagnostics()) == kept
        finally:
            await fresh.shutdown_session()
            await fresh.stop()
    finally:
        ignore.unlink(missing_ok=True)
        decrypted.unlink(missing_ok=True)


@pytest.mark.asyncio(loop_scope="function")
async def test_a_file_git_ignores_made_while_watched_is_left_out_as_git_leaves_it(
    watching: LanguageClient,
):
    await made_while_running_and_ignored(watching, watches=True)


@pytest.mark.asyncio(loop_scope="function")
async def test_a_file_git_ignores_made_before_a_save_is_left_out_as_git_leaves_it(
    client: LanguageClient,
):
    await made_while_running_and_ignored(client, watches=False)


WIDE_REPO = pathlib.Path(os.environ["LSP_WIDE_REPO"])


@pytest.mark.asyncio(loop_scope="function")
async def test_a_place_rendered_more_ways_than_listed_says_how_many_more(
    client: LanguageClient,
):
    """`${APP}` in the CNPG component every app's database is built from:
    the hover lists five renders and counts the others, none dropped
    unsaid."""
    doc = Buffer(client, WIDE_REPO / "kubernetes/components/postgres/cluster.yaml")
    await doc.diagnostics()
    text = (await doc.hover("${APP}", 3)).contents.value
    listed = [line for line in text.split("\n\n") if line.startswith("= `")]
    assert len(listed) == 5, text
    # Each app names itself through an anchor (`name: &app authentik`,
    # `APP: *app`): the value, not the anchor, is what is defined.
    assert not any(line.startswith("= `&") for line in listed), listed
    more = re.search(r"and (\d+) more render\(s\) of this place", text)
    assert more and int(more.group(1)) > 0, text


SECRET_REPO = pathlib.Path(os.environ["LSP_SECRET_REPO"])
PLANTED = os.environ["LSP_PLANTED"]


@pytest.mark.asyncio(loop_scope="function")
async def test_names_made_from_a_secret_are_shown_by_their_variable(client: LanguageClient):
    """A ConfigMap and a Flux Kustomization named and namespaced from a
    Secret's values: diagnostics, their related places, hovers and code
    actions show `<NAME from Secret flux-system/vars>`, never the value."""
    doc = Buffer(client, SECRET_REPO / "apps/cm.yaml")
    diagnostics = await doc.diagnostics()
    codes = {d.code for d in diagnostics}
    assert {"flux-variable-undefined", "flux-kustomization-path-missing"} <= codes, diagnostics
    shown = []
    for d in diagnostics:
        shown.append(d.message)
        shown.extend(r.message for r in d.related_information or [])
        shown.extend(a.title for a in await code_actions(doc, d) or [])
    for needle, skip in [("app-${NAME}", 6), ("${UNDEFINED_HERE}", 2), ("${NS}", 2)]:
        hover = await doc.hover(needle, skip)
        if hover is not None:
            shown.append(hover.contents.value)
    assert all(PLANTED not in text for text in shown), shown
    assert any("<NAME from Secret flux-system/vars>" in text for text in shown), shown
