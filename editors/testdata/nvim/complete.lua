-- Drives darman's inline completions from a real, headless Neovim 0.7.2
-- (editors/completion_test.go): the helper (darman.lua) starts
-- darman lsp with completion = true, the person enters insert mode at the
-- end of a line, the suggestion shows as an extmark, typing its first
-- letters keeps the rest on screen, <Tab> inserts it; then, elsewhere, a
-- suggestion shown over the middle of a line, dismissed with <C-]>; and
-- one of several lines in another file, accepted whole.
-- Keys go through nvim_input, so the steps run in a coroutine that yields
-- to the main loop (which reads the keys) while it waits.
-- It writes what it saw, key=value per line, to $OUT, and quits.
local bin, root, out_path, helper = os.getenv("DARMAN_BIN"), os.getenv("WORKSPACE"), os.getenv("OUT"), os.getenv("HELPER_DIR")
local results = {}
local function record(k, v) table.insert(results, k .. "=" .. tostring(v)) end
local function finish()
  local f = io.open(out_path, "w")
  f:write(table.concat(results, "\n") .. "\n")
  f:close()
  vim.cmd("qa!")
end

local co
local function resume()
  local ok, err = coroutine.resume(co)
  if not ok then
    record("error", err)
    finish()
  end
end
-- await polls cond from the main loop (keys typed meanwhile are read).
local function await(cond, ms)
  local deadline = vim.loop.now() + (ms or 20000)
  while not cond() do
    if vim.loop.now() > deadline then return false end
    vim.defer_fn(resume, 10)
    coroutine.yield()
  end
  return true
end

package.path = helper .. "/?.lua;" .. package.path
local darman = require("darman")

co = coroutine.create(function()
  vim.cmd("edit " .. root .. "/main.go")
  local buf = vim.api.nvim_get_current_buf()
  local initialized = false
  local id = darman.start({
    cmd = { bin, "lsp", "--stdio" },
    root_dir = root,
    on_init = function() initialized = true end,
    completion = { debounce = 10 },
  })
  vim.lsp.buf_attach_client(buf, id)
  if not await(function() return initialized end) then error("darman did not initialize") end
  local client = vim.lsp.get_client_by_id(id)
  record("provider", client.server_capabilities.inlineCompletionProvider ~= nil)
  local completion = darman.completion()
  local ns = vim.api.nvim_get_namespaces()["darman_completion"]
  -- ghost returns what the extmarks show: the first line, then the virtual lines.
  local function ghost()
    local marks = vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })
    local m = marks[1]
    if not m then return nil end
    local parts = { m[2] .. ":" .. m[3] .. ":" .. m[4].virt_text[1][1] }
    for _, l in ipairs(m[4].virt_lines or {}) do
      table.insert(parts, l[1][1])
    end
    return table.concat(parts, "|")
  end
  local function line(n) return vim.api.nvim_buf_get_lines(buf, n - 1, n, false)[1] end

  -- The model stalls on the first request (completion_test.go's script):
  -- moving the cursor away cancels it ($/cancelRequest), and darman
  -- closes the model's connection — the test writes "gone" when it sees
  -- that. No text changed, so darman's own didChange rule played no part.
  local marker = os.getenv("MARKER_DIR")
  local function exists(name) return vim.loop.fs_stat(marker .. "/" .. name) ~= nil end
  vim.api.nvim_win_set_cursor(0, { 7, 0 })
  vim.api.nvim_input("A")
  if not await(function() return exists("stalled") end) then error("the first completion request never reached the model") end
  vim.api.nvim_input("<Left>")
  record("model_connection_closed", await(function() return exists("gone") end, 10000))
  record("stall_ghost", ghost() or "none")
  vim.api.nvim_input("<Esc>")
  if not await(function() return vim.api.nvim_get_mode().mode == "n" end) then error("still in insert mode") end

  -- Line 7 is `\t_ = "é"; fmt.` (UTF-16 columns are not bytes there); "A"
  -- appends at its end, and darman is asked.
  vim.api.nvim_win_set_cursor(0, { 7, 0 })
  vim.api.nvim_input("A")
  if not await(function() return ghost() ~= nil end) then error("no ghost text at the end of line 7: " .. tostring(completion.last_error)) end
  record("ghost", ghost())
  record("mode", vim.api.nvim_get_mode().mode)
  -- Typing the suggestion's first letters keeps the rest on screen.
  vim.api.nvim_input("Pri")
  if not await(function() return line(7) == '\t_ = "é"; fmt.Pri' end) then error("the typing did not land: " .. line(7)) end
  record("typed_through", ghost())
  if not await(function() return completion.visible() and (ghost() or ""):find("ntln", 1, true) end) then error("the suggestion went away after typing") end
  vim.api.nvim_input("<Tab>")
  if not await(function() return line(7) ~= '\t_ = "é"; fmt.Pri' end) then error("<Tab> inserted nothing") end
  record("accepted", line(7))
  record("after_accept", ghost() or "none")
  record("cursor", table.concat(vim.api.nvim_win_get_cursor(0), ","))
  vim.api.nvim_input("<Esc>")
  if not await(function() return vim.api.nvim_get_mode().mode == "n" end) then error("still in insert mode") end

  -- Mid-line (line 6 `\tgreeting := "héllo"`, after `:=`), where the
  -- suggestion covers the rest of the line; <C-]> dismisses it.
  vim.api.nvim_win_set_cursor(0, { 6, 11 })
  vim.api.nvim_input("a")
  if not await(function() return ghost() ~= nil end) then error("no ghost text in the middle of line 6: " .. tostring(completion.last_error)) end
  record("mid_ghost", ghost())
  vim.api.nvim_input("<C-]>")
  if not await(function() return ghost() == nil end) then error("<C-]> did not dismiss") end
  record("dismissed", line(6))
  vim.api.nvim_input("<Esc>")
  await(function() return vim.api.nvim_get_mode().mode == "n" end)
  record("requests", completion.stats.requests)
  record("modified", vim.bo[buf].modified)

  -- A suggestion of several lines (other.go's model answer), at the end of
  -- an indented empty line: its first line at the cursor, the others as
  -- virtual lines below; <Tab> inserts them all.
  vim.cmd("write")
  vim.cmd("edit " .. root .. "/other.go")
  local other = vim.api.nvim_get_current_buf()
  buf = other
  vim.lsp.buf_attach_client(other, id)
  if not await(function() return vim.lsp.buf_is_attached(other, id) end) then error("other.go not attached") end
  vim.api.nvim_win_set_cursor(0, { 5, 0 })
  vim.api.nvim_input("A")
  if not await(function() return ghost() ~= nil end) then error("no ghost text in other.go: " .. tostring(completion.last_error)) end
  record("multi_ghost", ghost())
  vim.api.nvim_input("<Tab>")
  if not await(function() return line(5) ~= "\t" end) then error("<Tab> inserted nothing in other.go") end
  record("multi_accepted", table.concat(vim.api.nvim_buf_get_lines(other, 4, 7, false), "|"))
  record("multi_cursor", table.concat(vim.api.nvim_win_get_cursor(0), ","))
  vim.api.nvim_input("<Esc>")
  await(function() return vim.api.nvim_get_mode().mode == "n" end)

  vim.lsp.stop_client(id)
  record("stopped", await(function() return vim.lsp.get_client_by_id(id) == nil end))
  finish()
end)
resume()
