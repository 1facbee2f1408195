-- Drives the plugin's two commands as the README names them, in a headless
-- Neovim 0.12 from the Debian sid root (editors/neovim_test.go
-- TestNeovim012PluginCommands), with the plugin installed as docs/editors.md
-- prints it (a native package) and no init file: :DarmanStart starts darman
-- lsp and attaches main.go, :DarmanPrompt {text} sends the prompt, the
-- permission is answered through vim.ui.select, the agent's edit lands in
-- the buffer and on disk (the helper saves it), and the answer streams into
-- the split. It writes key=value lines to $OUT.
local out_path = os.getenv("OUT")
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
    if item == "Allow once" then return on_choice(item, i) end
  end
  on_choice(nil, nil)
end

local function read(path)
  local f = io.open(path)
  local s = f:read("*a")
  f:close()
  return s
end

co = coroutine.create(function()
  record("version", tostring(vim.version()))
  record("commands", vim.fn.exists(":DarmanStart") .. "," .. vim.fn.exists(":DarmanPrompt"))
  vim.cmd("edit main.go")
  local buf = vim.api.nvim_get_current_buf()
  local path = vim.api.nvim_buf_get_name(buf)
  vim.cmd("DarmanStart")
  if not await(function()
    local c = vim.lsp.get_clients({ name = "darman", bufnr = buf })[1]
    return c ~= nil and c.initialized
  end) then error(":DarmanStart attached no darman to main.go") end
  record("attached", true)
  vim.cmd("DarmanPrompt comment main")
  local want = os.getenv("COMMENT")
  if not await(function() return read(path):find(want, 1, true) ~= nil end, 60000) then
    error("the edit never reached the disk: " .. read(path))
  end
  record("buffer_changed", table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n"):find(want, 1, true) ~= nil)
  local function streamed()
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_get_name(b):find("darman://session", 1, true) then
        return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n"):find(os.getenv("ANSWER"), 1, true) ~= nil
      end
    end
    return false
  end
  record("streamed", await(streamed, 30000))
  local client = vim.lsp.get_clients({ name = "darman" })[1]
  client:stop()
  record("stopped", await(function() return client:is_stopped() end, 20000))
  finish()
end)
vim.schedule(resume)
