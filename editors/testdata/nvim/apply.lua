-- Applies a code block of darman's answer from a headless Neovim 0.12 in
-- the Debian sid root (editors/neovim_test.go TestNeovim012ApplyCodeBlock),
-- the plugin installed as a native package, no init file: :DarmanStart
-- attaches main.go, :DarmanPrompt asks, and the answer, a fenced block
-- naming main.go, streams into the darman://session split. :DarmanApply
-- with the cursor outside any block says so; with the cursor inside the
-- block it asks the edit permission through vim.ui.select, answered with
-- $CHOICE. With "Allow once" the file (buffer and disk) holds the block's
-- code and the turn's revert (darman.turn.revert) takes it back; with
-- "Reject" the file is unchanged. A block whose fence names no file is
-- applied to the file typed at vim.ui.input ($INPUT); one naming a secret
-- ($FILE, .env) is refused by darman, and the user is told. With $KEY the
-- block is applied by the split's key instead of :DarmanApply. It writes
-- key=value lines to $OUT.
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

local choice = os.getenv("CHOICE")
vim.ui.select = function(items, opts, on_choice)
  record("asked", opts.prompt)
  for i, item in ipairs(items) do
    if item == choice then return on_choice(item, i) end
  end
  on_choice(nil, nil)
end
vim.ui.input = function(opts, on_confirm)
  record("input", opts.prompt .. (opts.default or ""))
  on_confirm(os.getenv("INPUT"))
end
local notified = {}
vim.notify = function(msg, level)
  table.insert(notified, { msg = msg, level = level })
end
local function notice(pattern)
  for _, n in ipairs(notified) do
    if n.msg:find(pattern, 1, true) then return n end
  end
end

local function read(path)
  local f = io.open(path)
  local s = f:read("*a")
  f:close()
  return s
end

co = coroutine.create(function()
  record("version", tostring(vim.version()))
  record("command", vim.fn.exists(":DarmanApply"))
  vim.cmd("edit main.go")
  local buf = vim.api.nvim_get_current_buf()
  local path = vim.api.nvim_buf_get_name(buf)
  local original = read(path)
  local code = os.getenv("CODE")
  vim.cmd("DarmanStart")
  if not await(function()
    local c = vim.lsp.get_clients({ name = "darman", bufnr = buf })[1]
    return c ~= nil and c.initialized
  end) then error(":DarmanStart attached no darman to main.go") end
  local darman = require("darman")
  vim.cmd("DarmanPrompt fix main")
  local view
  if not await(function()
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_get_name(b):find("darman://session", 1, true) then view = b end
    end
    return view ~= nil and darman.last_state == "idle"
  end, 60000) then error("the answer never ended in the split") end
  local lines = vim.api.nvim_buf_get_lines(view, 0, -1, false)
  local inside, outside
  for i, l in ipairs(lines) do
    if l:find("Println", 1, true) then inside = i end
    if l:find("fix main", 1, true) then outside = i end
  end
  if not inside or not outside then error("the split shows no block: " .. table.concat(lines, "\n")) end
  vim.api.nvim_set_current_win(vim.fn.bufwinid(view))

  -- Outside the block: nothing is asked, the user is told why.
  vim.api.nvim_win_set_cursor(0, { outside, 0 })
  vim.cmd("DarmanApply")
  local n = notice("no code block under the cursor")
  record("outside", n ~= nil and n.level == vim.log.levels.ERROR)

  vim.api.nvim_win_set_cursor(0, { inside, 0 })
  if os.getenv("KEY") ~= "" then
    -- The split's own key, as a person types it.
    vim.cmd("normal " .. os.getenv("KEY"))
  else
    vim.cmd("DarmanApply")
  end
  local told = "applied to " .. os.getenv("FILE")
  if not await(function() return notice(told) ~= nil end, 60000) then
    error("no answer to :DarmanApply: " .. vim.inspect(notified))
  end
  record("told", notice(told).msg)
  record("disk_is_code", read(path) == code)
  record("disk_unchanged", read(path) == original)
  record("buffer_is_code", table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n") .. "\n" == code)

  local client = vim.lsp.get_clients({ name = "darman" })[1]
  if os.getenv("REVERT") == "1" then
    -- The edit belongs to the session's last turn: its revert takes it back.
    local list = client:request_sync("workspace/executeCommand", { command = "darman.session.list", arguments = {} }, 10000)
    local session = list.result.sessions[1].sessionId
    local rev = client:request_sync("workspace/executeCommand", { command = "darman.turn.revert", arguments = { { sessionId = session } } }, 30000)
    if rev.err then error("revert: " .. rev.err.message) end
    record("reverted", await(function() return read(path) == original end, 30000))
  end
  client:stop()
  record("stopped", await(function() return client:is_stopped() end, 20000))
  finish()
end)
vim.schedule(resume)
