-- Drives darman lsp from a real, headless Neovim 0.12 (editors/neovim_test.go),
-- configured by the docs' snippets exactly as printed (the init file the
-- test wrote: vim.lsp.config + vim.lsp.enable, and the native inline
-- completions). MODE=edit: the code actions of a `darman:` line, "darman:
-- do it" run with client:exec_cmd, the permission answered through
-- vim.ui.select, the edit (non-ASCII) in the buffer unsaved, one u restoring
-- the text, redo and :w saving it. MODE=complete: vim.lsp.inline_completion
-- shows darman's suggestion as ghost text, moving the cursor clears it, and
-- <Tab> (the snippet's mapping) accepts it.
-- Keys go through nvim_input, so the steps run in a coroutine that yields
-- to the main loop while it waits. It writes key=value lines to $OUT.
local mode, out_path = os.getenv("MODE"), os.getenv("OUT")
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
local function await(cond, ms)
  local deadline = vim.uv.now() + (ms or 20000)
  while not cond() do
    if vim.uv.now() > deadline then return false end
    vim.defer_fn(resume, 10)
    coroutine.yield()
  end
  return true
end

-- The person allows what darman asks, once.
vim.ui.select = function(items, opts, on_choice)
  record("asked", opts.prompt)
  for i, item in ipairs(items) do
    local label = opts.format_item and opts.format_item(item) or item
    if type(label) == "table" then label = label.title end
    if label == "Allow once" then return on_choice(item, i) end
  end
  on_choice(nil, nil)
end

local progress_end
local default_progress = vim.lsp.handlers["$/progress"]
vim.lsp.handlers["$/progress"] = function(err, result, ctx, config)
  if result and result.value and result.value.kind == "end" then progress_end = result.value.message end
  return default_progress(err, result, ctx, config)
end

local function read(path)
  local f = io.open(path)
  local s = f:read("*a")
  f:close()
  return s
end

co = coroutine.create(function()
  vim.cmd("edit main.go")
  local buf = vim.api.nvim_get_current_buf()
  local path = vim.api.nvim_buf_get_name(buf)
  local client
  if not await(function()
    client = vim.lsp.get_clients({ name = "darman", bufnr = buf })[1]
    return client ~= nil and client.initialized
  end) then error("darman did not start from vim.lsp.enable") end
  record("version", tostring(vim.version()))
  local function text() return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n") .. "\n" end
  local function line(n) return vim.api.nvim_buf_get_lines(buf, n - 1, n, false)[1] end

  if mode == "edit" then
    local original = text()
    local actions
    local params = { textDocument = { uri = vim.uri_from_bufnr(buf) },
      range = { start = { line = 5, character = 0 }, ["end"] = { line = 5, character = 0 } },
      context = { diagnostics = {} } }
    client:request("textDocument/codeAction", params, function(err, res) actions = res or {} end, buf)
    if not await(function() return actions ~= nil end) then error("no answer to codeAction") end
    local titles, doit = {}, nil
    for _, a in ipairs(actions) do
      table.insert(titles, a.title)
      if a.title == "darman: do it" then doit = a end
    end
    record("actions", table.concat(titles, ","))
    if not doit then error("no do it action") end
    client:exec_cmd(doit.command, { bufnr = buf })
    local fixed = os.getenv("FIXED")
    if not await(function() return line(7) == "\t" .. fixed end, 60000) then error("the edit never reached the buffer: " .. text()) end
    record("buffer_changed", true)
    record("modified", vim.bo[buf].modified)
    record("disk_unchanged", read(path) == original)
    await(function() return progress_end ~= nil end, 60000)
    record("progress_end", progress_end)
    vim.api.nvim_buf_call(buf, function() vim.cmd("normal! u") end)
    record("undo_restores", text() == original)
    vim.api.nvim_buf_call(buf, function() vim.cmd("redo") end)
    -- Should :write stop at "file has changed since reading", this answers
    -- it (no), so the test sees the file unwritten instead of hanging.
    vim.api.nvim_input("n")
    vim.api.nvim_buf_call(buf, function() vim.cmd("write") end)
    record("saved", read(path) == text())
    record("saved_fixed", read(path):find(fixed, 1, true) ~= nil)
  else
    local suggestion = os.getenv("SUGGESTION")
    local function ghost()
      for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, -1, 0, -1, { details = true })) do
        local d = m[4]
        local parts = {}
        for _, chunk in ipairs(d.virt_text or {}) do table.insert(parts, chunk[1]) end
        local s = table.concat(parts)
        if s:find(suggestion, 1, true) then return m[2] .. ":" .. m[3] .. ":" .. s end
      end
      return nil
    end
    local n = vim.api.nvim_buf_line_count(buf)
    local target
    for i = 1, n do
      if line(i):find("fmt%.$") then target = i end
    end
    vim.api.nvim_win_set_cursor(0, { target, 0 })
    vim.api.nvim_input("A")
    -- Should the request on InsertEnter come before the client's inline
    -- completions are attached, typing asks again, as it does for a person.
    local shown = await(ghost, 5000)
    for _ = 1, 5 do
      if shown then break end
      vim.api.nvim_input("x<BS>")
      shown = await(ghost, 5000)
    end
    if not shown then error("no ghost text in insert mode at the end of line " .. target) end
    local first = ghost()
    record("ghost", first)
    -- Moving the cursor withdraws the suggestion shown there.
    vim.api.nvim_input("<Left>")
    record("moved_clears", await(function() return ghost() ~= first end, 5000))
    vim.api.nvim_input("<End>")
    if not await(function() return ghost() == first end, 30000) then error("no ghost text again at the end of the line") end
    vim.api.nvim_input("<Tab>")
    await(function() return line(target):find(suggestion, 1, true) ~= nil end, 5000)
    record("accepted", line(target))
    vim.api.nvim_input("<Esc>")
    await(function() return vim.api.nvim_get_mode().mode == "n" end, 2000)
  end
  client:stop()
  record("stopped", await(function() return client:is_stopped() end, 20000))
  finish()
end)
vim.schedule(resume)
