-- Drives darman lsp from a real, headless Neovim 0.7.2 (server/lsp/editors_test.go).
-- MODE=plain: vim.lsp.start_client alone; edits reach the disk and reload
-- through 'autoread'. MODE=helper: editors/nvim/darman.lua opts into
-- applyEditAndSave, sessionUpdates and requestPermission. MODE=codeaction:
-- as plain, but the turn starts from the "darman: fix this problem" code
-- action on a diagnostic.
-- It writes what it saw, key=value per line, to $OUT, and quits.
local bin, root, mode, out_path = os.getenv("DARMAN_BIN"), os.getenv("WORKSPACE"), os.getenv("MODE"), os.getenv("OUT")
local results = {}
local function record(k, v) table.insert(results, k .. "=" .. tostring(v)) end
local function finish()
  local f = io.open(out_path, "w")
  f:write(table.concat(results, "\n") .. "\n")
  f:close()
  vim.cmd("qa!")
end
local function fail(msg)
  record("error", msg)
  finish()
end

-- The person at the keyboard allows what darman asks, once.
vim.fn.inputlist = function(items)
  record("asked", (items[1]:gsub("\n", " ")))
  for _, item in ipairs(items) do
    local n = item:match("^(%d+)%. Allow once")
    if n then return tonumber(n) end
  end
  return 0
end
vim.ui.select = function(items, opts, on_choice)
  record("asked", opts.prompt)
  for i, item in ipairs(items) do
    if item == "Allow once" then return on_choice(item, i) end
  end
  on_choice(nil, nil)
end

local default_log = vim.lsp.handlers["window/logMessage"]
vim.lsp.handlers["window/logMessage"] = function(err, result, ctx, config)
  local path = result and result.message:match("transcript in (%S+)")
  if path then record("transcript", path) end
  return default_log(err, result, ctx, config)
end

local progress_end
local default_progress = vim.lsp.handlers["$/progress"]
vim.lsp.handlers["$/progress"] = function(err, result, ctx, config)
  if result and result.value and result.value.kind == "end" then progress_end = result.value.message end
  return default_progress(err, result, ctx, config)
end

vim.cmd("edit " .. root .. "/main.go")
local buf = vim.api.nvim_get_current_buf()
local function text() return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n") end
local original = text()

local initialized, darman = false, nil
local client_id
if mode == "helper" then
  package.path = os.getenv("HELPER_DIR") .. "/?.lua;" .. package.path
  darman = require("darman")
  client_id = darman.start({ cmd = { bin, "lsp", "--stdio" }, root_dir = root, on_init = function() initialized = true end })
else
  client_id = vim.lsp.start_client({
    name = "darman",
    cmd = { bin, "lsp", "--stdio" },
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = "root" } },
    on_init = function() initialized = true end,
  })
end
vim.lsp.buf_attach_client(buf, client_id)
if not vim.wait(20000, function() return initialized end, 20) then return fail("not initialized") end
local client = vim.lsp.get_client_by_id(client_id)

local function run(command)
  client.request("workspace/executeCommand", command, function(err) if err then record("prompt_error", err.message) end end, buf)
end
if mode == "codeaction" then
  local diag = {
    range = { start = { line = 5, character = 13 }, ["end"] = { line = 5, character = 30 } },
    severity = 1, source = "compiler", code = "UndeclaredName", message = "undefined: undefinedGreeting",
  }
  local params = { textDocument = { uri = vim.uri_from_bufnr(buf) }, range = diag.range, context = { diagnostics = { diag } } }
  client.request("textDocument/codeAction", params, function(err, actions)
    if err then return record("prompt_error", err.message) end
    for _, a in ipairs(actions or {}) do
      if a.title == "darman: fix this problem" then
        record("action", a.title)
        return run(a.command)
      end
    end
    record("prompt_error", "no fix action")
  end, buf)
else
  run({ command = "darman.prompt", arguments = { { prompt = "fix main.go so it builds" } } })
end

local ended
if mode == "helper" then
  ended = vim.wait(90000, function() return darman.last_state == "idle" or darman.last_state == "failed" end, 20)
  record("state", darman.last_state)
else
  ended = vim.wait(90000, function() return progress_end ~= nil end, 20)
  record("progress_end", progress_end)
end
if not ended then return fail("the turn did not end") end

if mode ~= "helper" then
  -- What focus changes and CursorHold do in an interactive Neovim.
  vim.cmd("checktime")
end
record("buffer_changed", text():find("hello from darman", 1, true) ~= nil)
record("modified", vim.bo[buf].modified)
vim.cmd("normal! u")
local undone = text()
record("undo_restores", undone == original)
-- If :write stops at "file has changed since reading", this answers it
-- (no), so the test sees the file unwritten instead of hanging.
vim.api.nvim_input("n")
vim.cmd("write")
local f = io.open(root .. "/main.go")
local disk = f:read("*a")
f:close()
record("write_ok", disk == undone .. "\n")
-- Stop darman as Neovim does on :qa (shutdown, exit) and wait for the
-- process to end: it stops what it started (language servers) first.
vim.lsp.stop_client(client_id)
record("stopped", vim.wait(20000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 20))
finish()
