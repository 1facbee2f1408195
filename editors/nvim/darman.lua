-- darman.lua: an optional helper for Neovim (0.7.2 and later) that opts into
-- darman's custom messages (docs/protocol.md):
--
--   * applyEditAndSave: the agent's edits arrive as workspace/applyEdit; they
--     are applied to the buffers (so `u` undoes them) and saved before darman
--     is answered, so darman never writes a file Neovim has open;
--   * sessionUpdates: the session's stream is shown in a split;
--   * requestPermission: permission questions are asked with vim.ui.select;
--   * elicitation: MCP servers' questions (darman/elicit) are asked with
--     vim.ui.select for choices and vim.ui.input for text and numbers (a
--     value that does not fit is asked again); a URL is opened with
--     M.open_url only after the user chose Open, and only an http(s) one;
--   * darman.apply(): the code block under the cursor in the split becomes
--     the file its fence names (darman.turn.apply), asked and revertable
--     as the agent's edits are.
--
-- Use:
--   local darman = require("darman")            -- this file on 'runtimepath'
--   local id = darman.start({ cmd = { "darman", "lsp" }, root_dir = vim.loop.cwd() })
--   vim.lsp.buf_attach_client(0, id)
--   darman.prompt("add a test for parse")       -- or :lua require("darman").prompt(...)
--
-- Inline completions (ghost text, when darman has a completion model): pass
-- completion = true (or the options of lua/darman/completion.lua) to start;
-- darman.completion() is that module.
--
-- Without this file darman still works with plain vim.lsp.start_client: edits
-- go to the disk and reload through 'autoread', permissions through
-- showMessageRequest, progress in the usual progress handler.

local M = {}

M.client_id = nil

-- The keys the helper maps, buffer-local in its split: apply (normal mode)
-- runs M.apply() on the code block under the cursor. start's keys option
-- changes them (false maps none; a key set to false is skipped).
M.keys = { apply = "ga" }

-- The directory of this file: lua/darman/completion.lua is found from it
-- whether this file was loaded from 'runtimepath' or package.path.
local dir = debug.getinfo(1, "S").source:sub(2):match("^(.*)[/\\][^/\\]*$") or "."

-- completion returns the inline completion module (lua/darman/completion.lua).
function M.completion()
  local m = package.loaded["darman.completion"]
  if not m then
    m = dofile(dir .. "/lua/darman/completion.lua")
    package.loaded["darman.completion"] = m
  end
  return m
end

-- capabilities returns client capabilities that opt into darman's messages.
function M.capabilities(base)
  local caps = base or vim.lsp.protocol.make_client_capabilities()
  caps.experimental = caps.experimental or {}
  caps.experimental.darman = {
    sessionUpdates = true,
    requestPermission = true,
    applyEditAndSave = true,
    elicitation = true,
  }
  return caps
end

-- uris returns the documents a workspace edit touches.
local function uris(edit)
  local out, seen = {}, {}
  local function add(uri)
    if uri and not seen[uri] then
      seen[uri] = true
      table.insert(out, uri)
    end
  end
  for uri in pairs(edit.changes or {}) do
    add(uri)
  end
  for _, change in ipairs(edit.documentChanges or {}) do
    if change.textDocument then
      add(change.textDocument.uri)
    elseif change.kind == "create" then
      add(change.uri)
    end
  end
  return out
end

local function apply_and_save(_, params, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local ok, err = pcall(vim.lsp.util.apply_workspace_edit, params.edit, client.offset_encoding)
  if not ok then
    return { applied = false, failureReason = tostring(err) }
  end
  for _, uri in ipairs(uris(params.edit)) do
    local bufnr = vim.uri_to_bufnr(uri)
    local saved, werr = pcall(vim.api.nvim_buf_call, bufnr, function()
      vim.cmd("silent write")
    end)
    if not saved then
      return { applied = false, failureReason = "applied but not saved: " .. tostring(werr) }
    end
  end
  return { applied = true }
end

-- The session's stream, in a scratch buffer shown in a split. Each stretch
-- of one session's updates starts at an extmark of view.ns;
-- view.sessions[mark] is that session, the one its answers belong to.
local view = { buf = nil, ns = vim.api.nvim_create_namespace("darman.session"), sessions = {}, last = nil }

local function view_buffer()
  if view.buf and vim.api.nvim_buf_is_valid(view.buf) then
    return view.buf
  end
  view.buf = vim.api.nvim_create_buf(false, true)
  view.sessions, view.last = {}, nil
  vim.api.nvim_buf_set_name(view.buf, "darman://session")
  vim.api.nvim_buf_set_option(view.buf, "filetype", "markdown")
  if M.keys and M.keys.apply then
    vim.keymap.set("n", M.keys.apply, function() M.apply() end,
      { buffer = view.buf, desc = "darman: apply the code block under the cursor to its file" })
  end
  local win = vim.api.nvim_get_current_win()
  vim.cmd("botright split")
  vim.api.nvim_win_set_buf(0, view.buf)
  vim.api.nvim_set_current_win(win)
  return view.buf
end

-- show appends text of session's updates to the view.
local function show(text, session)
  local buf = view_buffer()
  local last = vim.api.nvim_buf_line_count(buf)
  local tail = vim.api.nvim_buf_get_lines(buf, last - 1, last, false)[1] or ""
  if session and session ~= view.last then
    -- Left gravity: the mark stays before the text inserted at it.
    local mark = vim.api.nvim_buf_set_extmark(buf, view.ns, last - 1, #tail, { right_gravity = false })
    view.sessions[mark], view.last = session, session
  end
  vim.api.nvim_buf_set_text(buf, last - 1, #tail, last - 1, #tail, vim.split(text, "\n", { plain = true }))
end

local function on_update(_, params)
  local u = params.update or {}
  local kind = u.sessionUpdate
  local function append(text)
    show(text, params.sessionId)
  end
  if kind == "user_message_chunk" then
    append("\n\n> " .. ((u.content or {}).text or "") .. "\n\n")
  elseif kind == "agent_message_chunk" then
    append((u.content or {}).text or "")
  elseif kind == "tool_call" then
    append("\n- " .. (u.title or "tool") .. " …\n")
  elseif kind == "tool_call_update" and (u.status == "completed" or u.status == "failed") then
    append("\n- " .. (u.title or "tool") .. ": " .. u.status .. "\n")
  elseif kind == "state_update" and u.state == "failed" then
    append("\n**failed**: " .. ((u.error or {}).message or "") .. "\n")
  end
  M.last_state = kind == "state_update" and u.state or M.last_state
  return vim.NIL
end

local function on_permission(_, params)
  local names = {}
  for _, o in ipairs(params.options) do
    table.insert(names, o.name)
  end
  local choice
  vim.ui.select(names, { prompt = "darman wants to " .. params.toolCall.title }, function(_, idx)
    choice = idx or 0
  end)
  -- vim.ui.select may answer later (a picker): wait for it.
  vim.wait(300000, function() return choice ~= nil end, 50)
  if not choice or choice == 0 then
    return { outcome = { outcome = "cancelled" } }
  end
  return { outcome = { outcome = "selected", optionId = params.options[choice].optionId } }
end

-- wait_for calls ask(done) and waits for done(value): vim.ui may answer
-- later (a picker). It returns the value, nil for Escape.
local function wait_for(ask)
  local answered, value = false, nil
  ask(function(v)
    answered, value = true, v
  end)
  vim.wait(300000, function() return answered end, 50)
  return value
end

local function select(items, prompt)
  return wait_for(function(done)
    vim.ui.select(items, { prompt = prompt }, function(item) done(item) end)
  end)
end

-- open_url opens an http(s) URL in the browser; replace it to open URLs
-- another way.
function M.open_url(url)
  if vim.ui.open then
    vim.ui.open(url)
    return true
  end
  local opener = vim.fn.has("mac") == 1 and "open" or "xdg-open"
  return vim.fn.jobstart({ opener, url }, { detach = true }) > 0
end

local function label(f)
  return (f.title and f.title ~= "") and f.title or f.name
end

-- check returns the value typed for field f, or nil and why it does not
-- fit.
local function check(f, text)
  local t = vim.trim(text)
  if f.type == "number" or f.type == "integer" then
    local n = tonumber(t)
    if not n then return nil, label(f) .. " must be a number" end
    if f.type == "integer" and n ~= math.floor(n) then return nil, label(f) .. " must be a whole number" end
    if f.minimum and n < f.minimum then return nil, label(f) .. " must be at least " .. f.minimum end
    if f.maximum and n > f.maximum then return nil, label(f) .. " must be at most " .. f.maximum end
    return n
  end
  if f.type == "array" then
    local out = {}
    for item in t:gmatch("[^,]+") do
      item = vim.trim(item)
      if f.enum and not vim.tbl_contains(f.enum, item) then
        return nil, item .. " is not one of " .. table.concat(f.enum, ", ")
      end
      table.insert(out, item)
    end
    return out
  end
  return text
end

local skip = "Skip"
-- skipped is ask_field's answer for an optional field left empty.
local skipped = {}

-- ask_field returns the user's value for f, skipped for an optional field
-- left empty, nil for Escape.
local function ask_field(f, server)
  local what = label(f) .. (f.description and f.description ~= "" and (" (" .. f.description .. ")") or "")
  local prompt = server .. " asks for " .. what
  if f.type == "boolean" or (f.enum and #f.enum > 0 and f.type ~= "array") then
    local items = f.type == "boolean" and { "Yes", "No" } or vim.deepcopy(f.enum)
    if not f.required then table.insert(items, skip) end
    local choice = select(items, prompt)
    if choice == nil then return nil end
    if choice == skip then return skipped end
    if f.type == "boolean" then return choice == "Yes" end
    if f.type == "number" or f.type == "integer" then return tonumber(choice) end
    return choice
  end
  if f.type == "array" and f.enum then
    prompt = prompt .. " [" .. table.concat(f.enum, ", ") .. ", separated by commas]"
  end
  local default = (f.default ~= nil and f.default ~= vim.NIL and type(f.default) ~= "table") and tostring(f.default) or nil
  while true do
    local text = wait_for(function(done)
      vim.ui.input({ prompt = prompt .. ": ", default = default }, done)
    end)
    if text == nil then return nil end
    if vim.trim(text) == "" then
      if not f.required then return skipped end
      vim.notify("darman: " .. label(f) .. " is required", vim.log.levels.WARN)
    else
      local v, why = check(f, text)
      if v ~= nil then return v end
      vim.notify("darman: " .. why, vim.log.levels.WARN)
    end
  end
end

local function on_elicit(_, params)
  local server = params.server or "an MCP server"
  if params.mode == "url" then
    local url = params.url or ""
    if not url:match("^[hH][tT][tT][pP][sS]?://") then
      vim.notify("darman: declined " .. server .. "'s request to open " .. url .. ": only http and https addresses are opened", vim.log.levels.WARN)
      return { action = "decline" }
    end
    local msg = (params.message and params.message ~= "") and (": " .. params.message) or ""
    local choice = select({ "Open", "Decline" }, "The MCP server " .. server .. " asks you to open " .. url .. msg)
    if choice == nil then return { action = "cancel" } end
    if choice ~= "Open" then return { action = "decline" } end
    if not M.open_url(url) then
      vim.notify("darman: could not open " .. url .. "; open it yourself to continue with " .. server, vim.log.levels.WARN)
    end
    return { action = "accept" }
  end
  local choice = select({ "Answer", "Decline" }, "The MCP server " .. server .. " asks: " .. (params.message or ""))
  if choice == nil then return { action = "cancel" } end
  if choice ~= "Answer" then return { action = "decline" } end
  local content = vim.empty_dict()
  for _, f in ipairs(params.fields or {}) do
    local v = ask_field(f, server)
    if v == nil then return { action = "cancel" } end
    if v ~= skipped then
      content[f.name] = v
    end
  end
  return { action = "accept", content = content }
end

M.handlers = {
  ["workspace/applyEdit"] = apply_and_save,
  ["darman/sessionUpdate"] = on_update,
  ["darman/requestPermission"] = on_permission,
  ["darman/elicit"] = on_elicit,
}

-- start starts darman lsp with the opt-ins and returns the client id.
-- opts: cmd (default {"darman", "lsp"}), root_dir, init_options, on_init,
-- on_attach, completion (true or the inline completion options: ghost text
-- in every buffer attached to darman), keys (M.keys: false maps none).
function M.start(opts)
  opts = opts or {}
  if opts.keys == false then
    M.keys = false
  elseif type(opts.keys) == "table" then
    M.keys = vim.tbl_extend("force", M.keys or {}, opts.keys)
  end
  local root = opts.root_dir or vim.loop.cwd()
  local caps = M.capabilities(opts.capabilities)
  local completion = opts.completion and M.completion() or nil
  if completion then
    completion.capabilities(caps)
  end
  M.client_id = vim.lsp.start_client({
    name = "darman",
    cmd = opts.cmd or { "darman", "lsp" },
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    capabilities = caps,
    handlers = vim.tbl_extend("force", M.handlers, opts.handlers or {}),
    init_options = opts.init_options,
    on_init = opts.on_init,
    on_attach = function(client, buf)
      if completion then
        completion.attach(buf)
      end
      if opts.on_attach then
        opts.on_attach(client, buf)
      end
    end,
  })
  if completion then
    completion.setup(vim.tbl_extend("force", type(opts.completion) == "table" and opts.completion or {}, { client_id = M.client_id }))
  end
  return M.client_id
end

-- prompt sends a prompt to darman; the answer streams into the split.
function M.prompt(text, session_id, callback)
  local client = vim.lsp.get_client_by_id(M.client_id)
  local args = { prompt = text, sessionId = session_id }
  client.request("workspace/executeCommand", { command = "darman.prompt", arguments = { args } }, function(err, result)
    if err then
      vim.notify("darman: not applied to " .. file .. ": " .. err.message, vim.log.levels.ERROR)
    end
    if callback then
      callback(err, result)
    end
  end, 0)
end

-- Applying a code block of an answer (:DarmanApply): the block under the
-- cursor in the view becomes the whole text of the file its fence names,
-- through darman's own edit path (darman.turn.apply, docs/protocol.md): the
-- edit permission is asked as for the agent's edits (on_permission), the
-- file is written through the buffers (apply_and_save), and the edit joins
-- the session's last turn, whose revert takes it back.

-- opens_fence returns the fence a line opens (its characters, indent and
-- info string), or nil: CommonMark's ``` or ~~~, three or more, indented
-- at most 3 spaces; a backtick fence's info string holds no backtick.
local function opens_fence(line)
  local indent, fence, info = line:match("^( *)(```+)(.*)$")
  if not fence then
    indent, fence, info = line:match("^( *)(~~~+)(.*)$")
  end
  if not fence or #indent > 3 or (fence:sub(1, 1) == "`" and info:find("`", 1, true)) then
    return nil
  end
  return { fence = fence, indent = #indent, info = info }
end

local function closes_fence(line, open)
  local indent, fence = line:match("^( *)([`~]+)[ \t]*$")
  local c = open.fence:sub(1, 1)
  return fence ~= nil and #indent <= 3 and fence:match("^" .. c .. "+$") ~= nil and #fence >= #open.fence
end

-- fence_file returns the file a fence's info string names, or nil: the
-- forms the VS Code panel reads (vscode-extension/webview/src/markdown.ts
-- fenceFile): "go:main.go", "go title=main.go" (or file=, filename=, path=,
-- the name quoted or not), or a later word with a "." or "/" in it
-- ("go main.go").
function M.fence_file(info)
  local words = vim.split(vim.trim(info), "%s+")
  local named = (words[1] or ""):match("^[%w_+#%.%-]+:(%S+)$")
  if named then
    return named
  end
  for i = 2, #words do
    local w = words[i]
    for _, key in ipairs({ "title", "file", "filename", "path" }) do
      named = w:match("^" .. key .. "=[\"']?([^\"'%s]+)[\"']?$")
      if named then
        return named
      end
    end
    if w:match("^[^=%s\"'`]+[./][^=%s\"'`]*$") and w:sub(1, 1) ~= "-" then
      return w
    end
  end
  return nil
end

-- block_at returns the fenced code block of buffer buf holding row (0-based,
-- its fence lines included): {code, file, first, last}, or nil.
function M.block_at(buf, row)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local open, first
  for i, line in ipairs(lines) do
    local r = i - 1
    if open then
      if closes_fence(line, open) then
        if row >= first and row <= r then
          local code = {}
          for j = first + 2, i - 1 do
            -- The opening fence's indent comes off each line (CommonMark).
            local l = lines[j]
            local strip = math.min(open.indent, #(l:match("^ *")))
            table.insert(code, l:sub(strip + 1))
          end
          return { code = table.concat(code, "\n") .. "\n", file = M.fence_file(open.info), first = first, last = r }
        end
        open = nil
      end
    else
      open = opens_fence(line)
      first = r
    end
    if r > row and not open then
      return nil
    end
  end
  return nil
end

-- session_at returns the session whose updates the view shows at row.
local function session_at(row)
  local line = vim.api.nvim_buf_get_lines(view.buf, row, row + 1, false)[1] or ""
  local marks = vim.api.nvim_buf_get_extmarks(view.buf, view.ns, { row, #line }, 0, { limit = 1 })
  return marks[1] and view.sessions[marks[1][1]]
end

-- the_file returns the name of the file of the window the view was entered
-- from (the alternate window), or nil.
local function the_file()
  local win = vim.fn.win_getid(vim.fn.winnr("#"))
  if win == 0 then
    return nil
  end
  local buf = vim.api.nvim_win_get_buf(win)
  if vim.bo[buf].buftype ~= "" or vim.api.nvim_buf_get_name(buf) == "" then
    return nil
  end
  return vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buf), ":.")
end

local function fail(msg)
  vim.notify("darman: " .. msg, vim.log.levels.ERROR)
  return nil, msg
end

-- apply applies the code block under the cursor in the view (darman's
-- answers) to file, else to the file its fence names, else to the file
-- the user types (vim.ui.input, the file of the window they came from as
-- the default), as an edit of the last turn of the session the answer
-- belongs to. done(err, result), when given, gets darman.turn.apply's
-- answer ({applied, unchanged?, denied?, message, uri, turnId}). Errors
-- are notified and returned (nil, why).
function M.apply(file, done)
  local client = M.client_id and vim.lsp.get_client_by_id(M.client_id)
  if not client then
    return fail("darman is not running: :DarmanStart (or :DarmanPrompt) first")
  end
  if not view.buf or vim.api.nvim_get_current_buf() ~= view.buf then
    return fail("put the cursor in a code block of darman's answers (the darman://session split) to apply it")
  end
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  local block = M.block_at(view.buf, row)
  if not block then
    return fail("no code block under the cursor: put it inside a fenced block (```) of darman's answer")
  end
  local session = session_at(row)
  if not session then
    return fail("the answer under the cursor belongs to no session darman sent")
  end
  file = (file and file ~= "") and file or block.file
  if not file then
    file = wait_for(function(answer)
      vim.ui.input({ prompt = "Apply the code block to file: ", default = the_file(), completion = "file" }, answer)
    end)
    if not file or vim.trim(file) == "" then
      return fail("not applied: the code block names no file and none was given")
    end
    file = vim.trim(file)
  end
  local root = client.config.root_dir or vim.loop.cwd()
  local absolute = file:sub(1, 1) == "/" or file:match("^%a:[/\\]") ~= nil
  local path = absolute and file or (root .. "/" .. file)
  local args = { sessionId = session, uri = vim.uri_from_fname(vim.fn.fnamemodify(path, ":p")), text = block.code }
  client.request("workspace/executeCommand", { command = "darman.turn.apply", arguments = { args } }, function(err, result)
    if err then
      vim.notify("darman: not applied to " .. file .. ": " .. err.message, vim.log.levels.ERROR)
    elseif result.denied then
      vim.notify("darman: not applied to " .. file .. ": you rejected the edit", vim.log.levels.WARN)
    elseif result.unchanged then
      vim.notify("darman: " .. file .. " already holds the code block", vim.log.levels.INFO)
    else
      vim.notify("darman: applied to " .. file .. " (the turn's revert takes it back)", vim.log.levels.INFO)
    end
    if done then
      done(err, result)
    end
  end, view.buf)
  return true
end

return M
