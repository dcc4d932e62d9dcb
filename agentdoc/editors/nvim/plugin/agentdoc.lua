-- agentdoc for Neovim (0.7+): commands, reload-as-it-streams and a statusline for session
-- documents. The work is in lua/agentdoc/init.lua; this file only registers it.
if vim.g.loaded_agentdoc then
  return
end
vim.g.loaded_agentdoc = true

local function agentdoc()
  return require("agentdoc")
end

vim.api.nvim_create_user_command("AgentdocRun", function()
  agentdoc().run()
end, { desc = "Save, then send the pending prompt (agentdoc run)" })
vim.api.nvim_create_user_command("AgentdocCancel", function()
  agentdoc().cancel()
end, { desc = "Cancel the reply streaming into this document" })
vim.api.nvim_create_user_command("AgentdocUndo", function(opts)
  agentdoc().undo(tonumber(opts.args), opts.bang)
end, {
  nargs = "?",
  bang = true,
  desc = "Take the last N turns back: replies, file changes, the session's memory (!: force)",
})
vim.api.nvim_create_user_command("AgentdocStatus", function()
  agentdoc().status()
end, { desc = "Show what agentdoc is doing with this document" })
vim.api.nvim_create_user_command("AgentdocApprove", function(opts)
  agentdoc().answer("approve", { always = opts.bang })
end, { bang = true, desc = "Allow the tool use waiting for permission (!: for the session)" })
vim.api.nvim_create_user_command("AgentdocDeny", function(opts)
  agentdoc().answer("deny", { message = opts.args })
end, { nargs = "?", desc = "Refuse the tool use waiting for permission, saying why" })
vim.api.nvim_create_user_command("AgentdocFork", function(opts)
  agentdoc().fork(tonumber(opts.args))
end, { nargs = "?", desc = "Fork this conversation (through turn N) into a new document" })
vim.api.nvim_create_user_command("AgentdocArchive", function(opts)
  agentdoc().archive(tonumber(opts.args))
end, { nargs = "?", desc = "Move all but the last N exchanges into the archive file" })
vim.api.nvim_create_user_command("AgentdocSearch", function(opts)
  agentdoc().search(opts.args)
end, { nargs = "+", desc = "Search the conversations under this folder into the quickfix list" })
vim.api.nvim_create_user_command("AgentdocNew", function(opts)
  agentdoc().new(opts.args)
end, { nargs = 1, complete = "file", desc = "Create a session document and open it" })

local group = vim.api.nvim_create_augroup("agentdoc", { clear = true })
vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "BufWritePost" }, {
  group = group,
  pattern = { "*.md", "*.markdown" },
  callback = function(args)
    agentdoc().attach(args.buf)
  end,
})
-- Buffers opened before the plugin was loaded (`nvim notes.md` with a lazy plugin manager).
for _, buf in ipairs(vim.api.nvim_list_bufs()) do
  if vim.api.nvim_buf_is_loaded(buf) and vim.api.nvim_buf_get_name(buf):match("%.m[arkdown]*$") then
    agentdoc().attach(buf)
  end
end
