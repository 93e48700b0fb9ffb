// Starts `kubectl-homelab_lint server` for the YAML files of the
// workspace: the language server does the work (findings, hover,
// definitions, code actions); this only launches it and restarts it
// when its path setting changes.
import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
} from "vscode-languageclient/node";

let client: LanguageClient | undefined;

function start(): LanguageClient {
  const command = vscode.workspace
    .getConfiguration("homelab-lint")
    .get<string>("path", "kubectl-homelab_lint");
  const server: ServerOptions = { command, args: ["server"] };
  const options: LanguageClientOptions = {
    documentSelector: [{ scheme: "file", language: "yaml" }],
  };
  const started = new LanguageClient("homelab-lint", "homelab-lint", server, options);
  void started.start();
  return started;
}

export function activate(context: vscode.ExtensionContext): void {
  client = start();
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration("homelab-lint.path")) {
        await client?.stop();
        client = start();
      }
    }),
  );
}

export function deactivate(): Thenable<void> | undefined {
  return client?.stop();
}
