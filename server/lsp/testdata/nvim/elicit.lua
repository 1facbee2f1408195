-- Runs editors/nvim/darman.lua's darman/elicit handler in a real,
-- headless Neovim (server/lsp/editors_elicit_test.go): $CASES is a JSON list
-- of {params, answers}; answers are the person's, in order, for
-- vim.ui.select (an item) and vim.ui.input (typed text), null for Escape.
-- It writes a JSON list of {result, asked, notes, opened} to $OUT, each
-- result encoded as the LSP client sends it, and quits.
package.path = os.getenv("HELPER_DIR") .. "/?.lua;" .. package.path
local darman = require("darman")
local f = io.open(os.getenv("CASES"))
local cases = vim.json.decode(f:read("*a"))
f:close()

local answers, asked, notes, opened
local function next_answer()
  local a = table.remove(answers, 1)
  if a == vim.NIL then return nil end
  return a
end
vim.ui.select = function(items, opts, done)
  table.insert(asked, { kind = "select", prompt = opts.prompt, items = items })
  done(next_answer())
end
vim.ui.input = function(opts, done)
  table.insert(asked, { kind = "input", prompt = opts.prompt, default = opts.default or vim.NIL })
  done(next_answer())
end
vim.notify = function(msg) table.insert(notes, msg) end
darman.open_url = function(url)
  table.insert(opened, url)
  return true
end

local out = { capabilities = darman.capabilities({}).experimental.darman, runs = {} }
for _, c in ipairs(cases) do
  answers, asked, notes, opened = c.answers, {}, {}, {}
  local ok, result = pcall(darman.handlers["darman/elicit"], nil, c.params, { client_id = 1 })
  table.insert(out.runs, {
    result = ok and vim.json.decode(vim.json.encode(result)) or ("error: " .. tostring(result)),
    encoded = ok and vim.json.encode(result) or "",
    asked = asked,
    notes = notes,
    opened = opened,
  })
end
local w = io.open(os.getenv("OUT"), "w")
w:write(vim.json.encode(out))
w:close()
vim.cmd("qa!")
