-- darman inline completions for Neovim 0.7.2 and later: ghost text from
-- darman's textDocument/inlineCompletion (LSP 3.18), drawn with extmarks
-- (the suggestion's first line over the rest of the cursor's line, the
-- others as virtual lines below it).
--
--   local darman = require("darman")
--   darman.start({ cmd = { "darman", "lsp" }, completion = true })
--   -- or, for a client started another way:
--   require("darman.completion").setup({ client_id = id })
--
-- In insert mode darman is asked on InsertEnter and as you type (after
-- `debounce` ms); a newer request cancels the older one ($/cancelRequest,
-- which makes darman close the model's connection). Keys (insert mode,
-- buffer-local; `keys = false` maps none, a key set to false is skipped):
--   <Tab>   accept the suggestion (a plain <Tab> when there is none)
--   <M-]>   next suggestion (asks darman for more when it sent one)
--   <M-[>   previous suggestion
--   <C-]>   dismiss it until you type again
-- Functions for your own mappings: accept(), next(), prev(), dismiss(),
-- trigger() (ask now), visible().
--
-- Neovim 0.12 has inline completions built in: vim.lsp.inline_completion.
-- With it, skip this module and enable them for darman's client:
--   vim.lsp.inline_completion.enable(true, { client_id = id })
--   vim.keymap.set("i", "<Tab>", function()
--     if not vim.lsp.inline_completion.get() then return "<Tab>" end
--   end, { expr = true })
-- (vim.lsp.inline_completion.select({ count = 1 }) cycles.)

local M = {}

M.config = {
  client_id = nil,
  debounce = 50,
  hl_group = "DarmanSuggestion",
  keys = { accept = "<Tab>", next = "<M-]>", prev = "<M-[>", dismiss = "<C-]>" },
  -- filetype -> false turns completions off for it; "*" sets the others.
  filetypes = { ["*"] = true },
}

local ns = vim.api.nvim_create_namespace("darman_completion")
local group = vim.api.nvim_create_augroup("darman_completion", { clear = true })

-- The one suggestion on screen (insert mode is in one window at a time).
-- items: { row, start (byte), text, extra (bytes replaced after the
-- cursor), command } normalised when darman answered.
-- gen counts the scheduled requests: a debounce timer whose callback was
-- already queued when a newer keystroke came sends nothing. suppressed is
-- where (changedtick and cursor) dismiss or accept left the buffer: no
-- request there until it changes.
local s = { timer = nil, gen = 0, pending = nil, items = {}, index = 1, buf = nil, shown = false, suppressed = nil }

M.stats = { requests = 0, cancelled = 0, shown = 0, accepted = 0 }

local function client()
  local id = M.config.client_id
  return id and vim.lsp.get_client_by_id(id) or nil
end

local function enabled(buf)
  local ft = vim.bo[buf].filetype
  local f = M.config.filetypes or {}
  if f[ft] ~= nil then
    return f[ft] ~= false
  end
  return f["*"] ~= false
end

local function clear()
  if s.buf and vim.api.nvim_buf_is_valid(s.buf) then
    vim.api.nvim_buf_clear_namespace(s.buf, ns, 0, -1)
  end
  s.shown = false
end

local function cancel()
  s.gen = s.gen + 1
  if s.timer then
    s.timer:stop()
  end
  local p = s.pending
  s.pending = nil
  if p then
    local c = vim.lsp.get_client_by_id(p.client_id)
    if c then
      c.cancel_request(p.id)
      M.stats.cancelled = M.stats.cancelled + 1
    end
  end
end

local function reset()
  cancel()
  clear()
  s.items, s.index = {}, 1
end

local function cursor()
  local pos = vim.api.nvim_win_get_cursor(0)
  return pos[1] - 1, pos[2]
end

local function here(buf)
  local row, col = cursor()
  return vim.api.nvim_buf_get_changedtick(buf) .. ":" .. row .. ":" .. col
end

-- byte_col converts an LSP character offset on line to a byte offset.
local function byte_col(line, character, encoding)
  if encoding == "utf-8" then
    return math.min(character, #line)
  end
  local ok, b = pcall(vim.str_byteindex, line, character, encoding == "utf-16")
  return ok and b or #line
end

-- normalise turns darman's item into one anchored in the buffer: where
-- the text it replaces starts, and how much after the cursor it replaces.
local function normalise(item, buf, row, col, encoding)
  local text = item.insertText
  if type(text) == "table" then
    text = text.value -- a StringValue snippet: its text
  end
  if type(text) ~= "string" or text == "" then
    return nil
  end
  local line = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ""
  local start, extra = col, 0
  local r = item.range
  if r then
    if r.start.line ~= row or r["end"].line ~= row then
      return nil -- a suggestion that starts or ends on another line: not drawable here
    end
    start = byte_col(line, r.start.character, encoding)
    extra = math.max(0, byte_col(line, r["end"].character, encoding) - col)
  end
  if start > col then
    return nil
  end
  return { row = row, start = start, text = text, extra = extra, command = item.command }
end

-- view says what the current item shows at the cursor now: nil when the
-- typing since has left it.
local function view(item)
  if not item or not s.buf or vim.api.nvim_get_current_buf() ~= s.buf then
    return nil
  end
  local row, col = cursor()
  if row ~= item.row or col < item.start then
    return nil
  end
  local line = vim.api.nvim_buf_get_lines(s.buf, row, row + 1, false)[1] or ""
  local typed = line:sub(item.start + 1, col)
  if item.text:sub(1, #typed) ~= typed then
    return nil
  end
  local ghost = item.text:sub(#typed + 1)
  if ghost == "" then
    return nil
  end
  local tail = line:sub(col + 1)
  return { row = row, col = col, ghost = ghost, tail = tail, kept = tail:sub(item.extra + 1) }
end

local function render()
  clear()
  local v = view(s.items[s.index])
  if not v then
    return false
  end
  local lines = vim.split(v.ghost, "\n", { plain = true })
  local hl = M.config.hl_group
  local first = lines[1]
  if #lines == 1 then
    first = first .. v.kept
  end
  -- The first line is drawn over the rest of the line: pad it to cover
  -- what it replaces or pushes to the last line.
  local cover = vim.fn.strdisplaywidth(v.tail) - vim.fn.strdisplaywidth(first)
  if cover > 0 then
    first = first .. string.rep(" ", cover)
  end
  local opts = { virt_text = { { first, hl } }, virt_text_pos = "overlay", hl_mode = "combine" }
  if #lines > 1 then
    local below = {}
    for i = 2, #lines do
      local l = lines[i]
      if i == #lines then
        l = l .. v.kept
      end
      table.insert(below, { { l, hl } })
    end
    opts.virt_lines = below
  end
  vim.api.nvim_buf_set_extmark(s.buf, ns, v.row, v.col, opts)
  s.shown = true
  M.stats.shown = M.stats.shown + 1
  return true
end

-- request asks darman for suggestions at the cursor, cancelling the older
-- request first.
local function request(explicit)
  cancel()
  local c = client()
  local buf = vim.api.nvim_get_current_buf()
  if not c or not vim.lsp.buf_is_attached(buf, c.id) or not enabled(buf) then
    return
  end
  local params = vim.lsp.util.make_position_params(0, c.offset_encoding)
  -- InlineCompletionTriggerKind: 1 Invoked, 2 Automatic.
  params.context = { triggerKind = explicit and 1 or 2 }
  local row, col = cursor()
  local tick = vim.api.nvim_buf_get_changedtick(buf)
  local encoding = c.offset_encoding or "utf-16"
  local this
  local ok, id = c.request("textDocument/inlineCompletion", params, function(err, result)
    if s.pending ~= this then
      return -- superseded
    end
    s.pending = nil
    if err then
      -- -32800 RequestCancelled, -32801 ContentModified: a newer request follows.
      if err.code ~= -32800 and err.code ~= -32801 then
        M.last_error = err.message
      end
      return
    end
    local r2, c2 = cursor()
    if vim.api.nvim_get_current_buf() ~= buf or vim.api.nvim_get_mode().mode:sub(1, 1) ~= "i"
      or vim.api.nvim_buf_get_changedtick(buf) ~= tick or r2 ~= row or c2 ~= col then
      return -- the buffer moved on: its own request is on the way
    end
    local list = result and (result.items or result) or {}
    local items = {}
    for _, item in ipairs(list) do
      local n = normalise(item, buf, row, col, encoding)
      if n then
        table.insert(items, n)
      end
    end
    s.buf, s.items, s.index = buf, items, 1
    render()
  end, buf)
  if ok then
    this = { client_id = c.id, id = id, row = row, col = col }
    s.pending = this
    s.buf = buf
    M.stats.requests = M.stats.requests + 1
  end
end

local function schedule()
  local buf = vim.api.nvim_get_current_buf()
  if s.suppressed == here(buf) then
    return
  end
  s.suppressed = nil
  cancel()
  local gen = s.gen
  -- Typing through the suggestion keeps it on screen at once; darman's
  -- answer for the new position (from its cache) replaces it.
  if not render() then
    s.items, s.index = {}, 1
  end
  if not s.timer then
    s.timer = vim.loop.new_timer()
  end
  s.timer:start(M.config.debounce, 0, vim.schedule_wrap(function()
    if gen == s.gen and vim.api.nvim_get_mode().mode:sub(1, 1) == "i" and vim.api.nvim_get_current_buf() == buf then
      request(false)
    end
  end))
end

-- visible says whether a suggestion is on screen.
function M.visible()
  return s.shown and view(s.items[s.index]) ~= nil
end

-- accept inserts the suggestion on screen; false when there is none.
function M.accept()
  local item = s.items[s.index]
  local v = M.visible() and view(item) or nil
  if not v then
    return false
  end
  local lines = vim.split(item.text, "\n", { plain = true })
  cancel()
  clear()
  vim.api.nvim_buf_set_text(s.buf, v.row, item.start, v.row, v.col + item.extra, lines)
  local row = v.row + #lines - 1
  local col = #lines == 1 and item.start + #lines[1] or #lines[#lines]
  vim.api.nvim_win_set_cursor(0, { row + 1, col })
  s.items, s.index = {}, 1
  -- No new request for the text just accepted until the next keystroke.
  s.suppressed = here(s.buf)
  M.stats.accepted = M.stats.accepted + 1
  local c = client()
  if item.command and c then
    c.request("workspace/executeCommand", { command = item.command.command, arguments = item.command.arguments }, function() end, s.buf)
  end
  return true
end

local function cycle(step)
  if #s.items > 1 then
    s.index = (s.index - 1 + step) % #s.items + 1
    render()
  else
    request(true)
  end
end

function M.next()
  cycle(1)
end

function M.prev()
  cycle(-1)
end

-- dismiss hides the suggestion until the text changes.
function M.dismiss()
  reset()
  if s.buf and vim.api.nvim_buf_is_valid(s.buf) then
    s.suppressed = here(s.buf)
  end
end

-- trigger asks darman now (an explicit request: no debounce on darman's side).
function M.trigger()
  request(true)
end

local function map(buf, name, fn, fallback)
  local keys = M.config.keys
  local lhs = keys and keys[name]
  if not lhs then
    return
  end
  vim.keymap.set("i", lhs, function()
    if not fn() and fallback then
      vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(lhs, true, false, true), "n", false)
    end
  end, { buffer = buf, silent = true, desc = "darman: " .. name .. " the inline completion" })
end

-- attach turns completions on in buf (darman.start's on_attach does it).
function M.attach(buf)
  buf = (buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf
  vim.api.nvim_clear_autocmds({ group = group, buffer = buf })
  vim.api.nvim_create_autocmd({ "InsertEnter", "TextChangedI", "TextChangedP" }, { group = group, buffer = buf, callback = schedule })
  -- The cursor moved away (not by typing, which TextChangedI follows):
  -- the request for the old place is cancelled, the suggestion hidden.
  vim.api.nvim_create_autocmd("CursorMovedI", {
    group = group,
    buffer = buf,
    callback = function()
      local p = s.pending
      if p then
        local row, col = cursor()
        if row ~= p.row or col ~= p.col then
          cancel()
        end
      end
      if s.shown and not view(s.items[s.index]) then
        reset()
      end
    end,
  })
  vim.api.nvim_create_autocmd({ "InsertLeave", "BufLeave" }, {
    group = group,
    buffer = buf,
    callback = function()
      reset()
      s.suppressed = nil
    end,
  })
  map(buf, "accept", M.accept, true)
  map(buf, "next", function() M.next() return true end)
  map(buf, "prev", function() M.prev() return true end)
  map(buf, "dismiss", function()
    local was = M.visible()
    M.dismiss()
    return was
  end, true)
end

-- setup sets the options (see M.config) and attaches the buffers the
-- client is attached to.
function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", M.config, opts or {})
  if opts and opts.keys == false then
    M.config.keys = false
  end
  vim.api.nvim_set_hl(0, M.config.hl_group, { link = "Comment", default = true })
  local c = client()
  if c then
    for _, buf in ipairs(vim.api.nvim_list_bufs()) do
      if vim.lsp.buf_is_attached(buf, c.id) then
        M.attach(buf)
      end
    end
  end
  return M
end

-- capabilities adds the inline completion client capability (LSP 3.18).
function M.capabilities(caps)
  caps.textDocument = caps.textDocument or {}
  caps.textDocument.inlineCompletion = { dynamicRegistration = false }
  return caps
end

return M
