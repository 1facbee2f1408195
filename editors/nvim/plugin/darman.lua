-- The darman plugin's commands (Neovim 0.7.2 and later), defined at start-up
-- when editors/nvim is on 'runtimepath':
--
--   :DarmanStart          start `darman lsp` (vim.g.darman_cmd, default
--                         { "darman", "lsp" }) for the current directory and
--                         attach the current buffer and every file opened
--                         after it;
--   :DarmanPrompt {text}  send a prompt, starting darman first if needed; the
--                         answer streams into a split;
--   :DarmanApply [file]   in that split, apply the code block under the
--                         cursor to [file], else to the file its fence
--                         names (```go main.go), else to one you type: an
--                         edit of that session's last turn, asked as the
--                         agent's edits are, which the turn's revert takes
--                         back.
--
-- vim.g.darman_completion = true (or the options of lua/darman/completion.lua)
-- turns on inline completions (ghost text) in the buffers darman attaches;
-- vim.g.darman_keys changes the split's keys (ga applies the block under the
-- cursor, as :DarmanApply does; false maps none).
--
-- The rest is the module: require("darman") (lua/darman/init.lua).
if vim.g.loaded_darman then
  return
end
vim.g.loaded_darman = true

local function attach(buf)
  local darman = require("darman")
  if darman.client_id and vim.api.nvim_buf_get_name(buf) ~= "" and vim.bo[buf].buftype == "" then
    vim.lsp.buf_attach_client(buf, darman.client_id)
  end
end

-- start starts darman once; after() runs once it has initialized.
local function start(after)
  local darman = require("darman")
  if darman.client_id and vim.lsp.get_client_by_id(darman.client_id) then
    if after then
      after()
    end
    return
  end
  darman.start({
    cmd = vim.g.darman_cmd,
    completion = vim.g.darman_completion,
    keys = vim.g.darman_keys,
    on_init = function()
      if after then
        vim.schedule(after)
      end
    end,
  })
  attach(vim.api.nvim_get_current_buf())
  vim.api.nvim_create_autocmd("BufReadPost", {
    group = vim.api.nvim_create_augroup("darman", { clear = true }),
    callback = function(ev)
      attach(ev.buf)
    end,
  })
end

vim.api.nvim_create_user_command("DarmanStart", function()
  start()
end, { desc = "Start darman lsp and attach the buffers" })

vim.api.nvim_create_user_command("DarmanPrompt", function(args)
  start(function()
    require("darman").prompt(args.args)
  end)
end, { nargs = "+", desc = "Send a prompt to darman" })

vim.api.nvim_create_user_command("DarmanApply", function(args)
  require("darman").apply(args.args)
end, { nargs = "?", complete = "file", desc = "Apply the code block under the cursor in darman's answer to its file" })
