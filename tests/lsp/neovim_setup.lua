-- A set-up of docs/editors.md as a user follows it: tests/it/lsp.rs
-- writes the snippet as init.lua (`nvim --headless -u init.lua`) with
-- `kubectl-homelab_lint` on PATH and runs this, which opens LSP_FILE (as
-- typed: relative to the working directory) the way a user does and waits
-- for the linter's LSP_RULE finding on it. Exits 0 when it came, 1 with
-- what was there otherwise.

local FILE = os.getenv('LSP_FILE')
local RULE = os.getenv('LSP_RULE')
-- Generous: a safety net for a hung server, not a speed check.
local PATIENCE_MS = 300000

local function found(buf)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local lsp = (d.user_data or {}).lsp or {}
    if d.source == 'homelab-lint' and (d.code or lsp.code) == RULE then
      return true
    end
  end
  return false
end

vim.cmd('edit ' .. vim.fn.fnameescape(FILE))
local buf = vim.api.nvim_get_current_buf()
if vim.wait(PATIENCE_MS, function() return found(buf) end, 50) then
  io.stdout:write('neovim set-up: the finding came\n')
  vim.cmd('qall!')
else
  io.stderr:write('neovim set-up: no ' .. RULE .. ' finding on ' .. FILE .. ' (filetype '
    .. vim.bo.filetype .. '): ' .. vim.inspect(vim.diagnostic.get(buf)) .. '\n')
  vim.cmd('cquit 1')
end
