-- The language server driven by Neovim's built-in client, headless
-- (tests/it/lsp.rs runs `nvim --headless -u NONE -c "luafile THIS"`):
-- HOMELAB_LINT_BIN is the binary, LSP_FILE the CloudNativePG cluster of a
-- git copy of a corpus repository, LSP_RULE the finding it has there.
-- Opens the file, waits for the finding, hovers on its storage class
-- variable, applies the finding's suppression action and waits for the
-- finding to go. Exits 0 when all of it held, 1 with the reason on stderr
-- otherwise: a Lua error in headless Neovim would leave it running.
--
-- Written for Debian 12's Neovim 0.7 (`vim.lsp.start_client`) and later
-- ones (`vim.lsp.start`, 0.8+).

local BIN = os.getenv('HOMELAB_LINT_BIN')
local FILE = os.getenv('LSP_FILE')
local RULE = os.getenv('LSP_RULE')
-- Generous: a safety net for a hung server, not a speed check.
local PATIENCE_MS = 300000

local function check(ok, what)
  if not ok then
    error(what, 0)
  end
end

-- The LSP form of a diagnostic, whichever way this Neovim keeps it.
local function lsp_of(d)
  local lsp = (d.user_data or {}).lsp or {}
  return {
    code = d.code or lsp.code,
    data = lsp.data,
    range = {
      start = { line = d.lnum, character = d.col },
      ['end'] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col },
    },
    message = d.message,
    severity = d.severity,
    source = d.source,
  }
end

local function findings(buf)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local lsp = lsp_of(d)
    if lsp.code == RULE then
      table.insert(out, lsp)
    end
  end
  return out
end

local function request(buf, method, params)
  local answers, err = vim.lsp.buf_request_sync(buf, method, params, PATIENCE_MS)
  check(answers ~= nil, method .. ' got no answer: ' .. tostring(err))
  for _, answer in pairs(answers) do
    check(answer.error == nil, method .. ' failed: ' .. vim.inspect(answer.error))
    return answer.result
  end
  error(method .. ' got no answer from the server', 0)
end

local function run()
  check(BIN and FILE and RULE, 'HOMELAB_LINT_BIN, LSP_FILE and LSP_RULE must be set')
  vim.cmd('edit ' .. vim.fn.fnameescape(FILE))
  vim.bo.filetype = 'yaml'
  local buf = vim.api.nvim_get_current_buf()
  local config = {
    name = 'homelab-lint',
    cmd = { BIN, 'server' },
    root_dir = vim.fn.fnamemodify(FILE, ':h'),
  }
  if vim.lsp.start then
    check(vim.lsp.start(config), 'vim.lsp.start did not start the server')
  else
    local id = vim.lsp.start_client(config)
    check(id, 'vim.lsp.start_client did not start the server')
    vim.lsp.buf_attach_client(buf, id)
  end

  check(
    vim.wait(PATIENCE_MS, function() return #findings(buf) > 0 end, 50),
    'no ' .. RULE .. ' diagnostic was published; got ' .. vim.inspect(vim.diagnostic.get(buf))
  )
  local finding = findings(buf)[1]
  check(finding.source == 'homelab-lint', 'the diagnostic is not the linter\'s: ' .. vim.inspect(finding))

  -- Hover on `${CLUSTER_STORAGE_CLASS}`: its value, where it is defined.
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local at
  for i, line in ipairs(lines) do
    local col = line:find('${CLUSTER_STORAGE_CLASS}', 1, true)
    if col then
      at = { line = i - 1, character = col + 2 }
      break
    end
  end
  check(at, 'the file has no ${CLUSTER_STORAGE_CLASS}')
  local hover = request(buf, 'textDocument/hover', {
    textDocument = vim.lsp.util.make_text_document_params(buf),
    position = at,
  })
  local text = hover and hover.contents and (hover.contents.value or hover.contents) or ''
  check(type(text) == 'string' and text:find('ceph-block', 1, true), 'hover: ' .. vim.inspect(hover))
  check(text:find('cluster-settings.yaml:', 1, true), 'hover names no definition: ' .. text)

  -- The suppression action, applied as the editor applies it: the buffer
  -- changes, the server lints it again and the finding goes.
  local actions = request(buf, 'textDocument/codeAction', {
    textDocument = vim.lsp.util.make_text_document_params(buf),
    range = finding.range,
    context = { diagnostics = { finding } },
  })
  local suppress
  for _, action in ipairs(actions or {}) do
    if action.title:find('^Suppress') then
      suppress = action
    end
  end
  check(suppress and suppress.edit, 'no suppression action: ' .. vim.inspect(actions))
  vim.lsp.util.apply_workspace_edit(suppress.edit, 'utf-16')
  local written = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
  check(written:find('# homelab-lint: ignore ' .. RULE .. ' -- <reason>', 1, true), 'not applied: ' .. written)
  check(
    vim.wait(PATIENCE_MS, function() return #findings(buf) == 0 end, 50),
    'the finding stayed after its suppression: ' .. vim.inspect(findings(buf))
  )
end

local ok, err = xpcall(run, debug.traceback)
if ok then
  io.stdout:write('neovim: the finding, its hover and its suppression held\n')
  vim.cmd('qall!')
else
  io.stderr:write('neovim: ' .. tostring(err) .. '\n')
  vim.cmd('cquit 1')
end
