-- agentdoc for Neovim: run the CLI as a job, reload the document as the reply streams in,
-- show errors with vim.notify, and tell a statusline what the document is doing.
-- Works on Neovim 0.7 and later. See :help agentdoc.
local M = {}

M.config = {
  command = "agentdoc", -- the agentdoc executable
  interval = 250, -- ms between checks of session documents for new reply text
  notify_done = true, -- say when a reply has ended
  -- Buffer-local normal-mode maps in session documents; a key set to false has no map, and
  -- `keys = false` sets none.
  keys = {
    run = "<LocalLeader>r",
    cancel = "<LocalLeader>c",
    status = "<LocalLeader>s",
    approve = "<LocalLeader>a",
    deny = "<LocalLeader>d",
    fork = "<LocalLeader>f",
  },
}

local KEY_COMMANDS = {
  run = { "AgentdocRun", "send the pending prompt" },
  cancel = { "AgentdocCancel", "cancel the reply" },
  status = { "AgentdocStatus", "what agentdoc is doing" },
  approve = { "AgentdocApprove", "allow the waiting tool" },
  deny = { "AgentdocDeny", "refuse the waiting tool" },
  fork = { "AgentdocFork", "fork the conversation" },
}
local BUSY = { streaming = true, waiting = true, queued = true }

local uv = vim.loop
local attached = {} -- buffer number → true, for session documents
local jobs = {} -- buffer number → { id = job id, cancelled = bool }
local views = {} -- buffer number → { view = window view, at_end = cursor on the last line }
local seen = {} -- buffer number → the last status read: { state, turn, updated }
local quiet = {} -- buffer number → true: the reply's end was already told (a cancel)
local timer = nil

function M.setup(opts)
  opts = opts or {}
  local keys = opts.keys
  if type(keys) == "table" then
    keys = vim.tbl_extend("force", M.config.keys or {}, keys)
  end
  M.config = vim.tbl_extend("force", M.config, opts)
  if keys ~= nil then
    M.config.keys = keys
  end
end

local function notify(message, level)
  vim.notify(message, level or vim.log.levels.ERROR, { title = "agentdoc" })
end

--- Whether the buffer's frontmatter has an `agentdoc:` key (the mark of a session document).
function M.is_session(buf)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, 200, false)
  if not lines[1] or not lines[1]:match("^%-%-%-%s*$") then
    return false
  end
  for i = 2, #lines do
    if lines[i]:match("^%-%-%-%s*$") or lines[i]:match("^%.%.%.%s*$") then
      return false
    elseif lines[i]:match("^agentdoc%s*:") then
      return true
    end
  end
  return false
end

-- In a synced folder agentdoc keeps a document's state out of the tree, in a mirror of the
-- folder under its own state folder (docs/protocol.md, "Where state lives"): found here by the
-- sync tools' markers. A folder only the config's `synced` list names is not recognised.
local MARKERS = { ".stfolder", ".dropbox.cache", ".dropbox" }
local state_folders = {} -- folder → its `.agentdoc/`, looked up once

local function sync_root(folder)
  local here = folder
  while true do
    for _, name in ipairs(MARKERS) do
      if uv.fs_lstat(here .. "/" .. name) then
        return here
      end
    end
    if #vim.fn.glob(here .. "/.sync_*.db", true, true) > 0
        or #vim.fn.glob(here .. "/._sync_*.db", true, true) > 0 then
      return here
    end
    local up = vim.fn.fnamemodify(here, ":h")
    if up == here then
      return nil
    end
    here = up
  end
end

local function user_state()
  if (vim.env.AGENTDOC_STATE_DIR or "") ~= "" then
    return vim.env.AGENTDOC_STATE_DIR
  elseif (vim.env.XDG_STATE_HOME or "") ~= "" then
    return vim.env.XDG_STATE_HOME .. "/agentdoc"
  end
  return vim.env.HOME .. "/.local/state/agentdoc"
end

local function state_folder(folder)
  if state_folders[folder] == nil then
    local real = uv.fs_realpath(folder) or folder
    local root = sync_root(real)
    if root == nil then
      state_folders[folder] = folder .. "/.agentdoc"
    else
      local name = vim.fn.strcharpart(root:match("[^/]+$") or "root", 0, 40)
      local mirror = user_state() .. "/synced/" .. name .. "-" .. vim.fn.sha256(root):sub(1, 16)
      state_folders[folder] = mirror .. real:sub(#root + 1) .. "/.agentdoc"
    end
  end
  return state_folders[folder]
end

local function status_file(path)
  return state_folder(vim.fn.fnamemodify(path, ":h")) .. "/" .. vim.fn.fnamemodify(path, ":t")
    .. ".status.json"
end

local function field(value)
  return value ~= vim.NIL and value or nil
end

-- What the status file says changed since the last look: a reply that ended is told once
-- ("done"), and an error the daemon hit is told when no :AgentdocRun job reports it itself.
local function follow_status(buf)
  local status = M.read_status(vim.api.nvim_buf_get_name(buf)) or { state = "idle", updated = "" }
  local now = { state = status.state, turn = field(status.turn), updated = field(status.updated) }
  local before = seen[buf]
  seen[buf] = now
  -- `updated` has whole seconds: a state can change within one, so all three are compared.
  if before == nil or (before.updated == now.updated and before.state == now.state
      and before.turn == now.turn) then
    return
  end
  local ended = BUSY[before.state] or before.turn ~= now.turn
  if not ended or now.turn == nil or BUSY[now.state] then
    return
  end
  local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buf), ":t")
  if quiet[buf] then
    quiet[buf] = nil
  elseif now.state == "idle" and M.config.notify_done then
    notify(string.format("agentdoc: the reply to turn %d in %s is done", now.turn, name),
      vim.log.levels.INFO)
  elseif now.state == "error" and not jobs[buf] then
    notify("agentdoc: " .. name .. ": " .. tostring(field(status.error) or "the turn failed"))
  end
end

-- Reload the buffer if the file changed. The view is noted first, because with 'autoread'
-- Neovim reloads an unchanged buffer without FileChangedShell: a cursor on the last line then
-- follows the reply as it grows (FileChangedShellPost); anywhere else it stays where it was.
local function reload(buf)
  if vim.api.nvim_get_current_buf() == buf then
    views[buf] = { view = vim.fn.winsaveview(), at_end = vim.fn.line(".") == vim.fn.line("$") }
  end
  vim.cmd("silent! checktime " .. buf)
  views[buf] = nil
end

local function check_all()
  for buf in pairs(attached) do
    if vim.api.nvim_buf_is_loaded(buf) then
      reload(buf)
      follow_status(buf)
    else
      attached[buf] = nil
      seen[buf] = nil
    end
  end
end

local function map_keys(buf)
  local keys = M.config.keys
  if type(keys) ~= "table" then
    return
  end
  for name, lhs in pairs(keys) do
    local command = KEY_COMMANDS[name]
    if command and type(lhs) == "string" and lhs ~= "" then
      vim.api.nvim_buf_set_keymap(buf, "n", lhs, "<Cmd>" .. command[1] .. "<CR>",
        { noremap = true, silent = true, desc = "agentdoc: " .. command[2] })
    end
  end
end

local function ensure_timer()
  if timer == nil then
    timer = uv.new_timer()
    timer:start(M.config.interval, M.config.interval, vim.schedule_wrap(check_all))
  end
end

-- Written here rather than by Neovim, because Neovim asks before overwriting a file that
-- changed since it was read, and while a reply streams it changes several times a second.
-- agentdoc merges what is written with the reply it is writing.
local function write(buf, file)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local bo = vim.bo[buf]
  if bo.fileformat == "dos" then
    for i, line in ipairs(lines) do
      lines[i] = line .. "\r"
    end
  end
  if bo.bomb and #lines > 0 then
    lines[1] = "\239\187\191" .. lines[1]
  end
  if bo.endofline or bo.fixendofline then
    table.insert(lines, "")
  end
  if vim.fn.writefile(lines, file, "b") ~= 0 then
    notify("could not write " .. file)
    return
  end
  if file == vim.api.nvim_buf_get_name(buf) then
    bo.modified = false
  end
end

--- Make `buf` follow agentdoc's writes, if it is a session document.
function M.attach(buf)
  buf = (buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf
  if attached[buf] or not M.is_session(buf) then
    return
  end
  attached[buf] = true
  vim.b[buf].agentdoc = true
  vim.bo[buf].autoread = true
  local group = vim.api.nvim_create_augroup("agentdoc_buffer_" .. buf, { clear = true })
  vim.api.nvim_create_autocmd("FileChangedShell", {
    group = group,
    buffer = buf,
    callback = function()
      if vim.bo[buf].modified then
        vim.v.fcs_choice = "" -- keep the typing; the next save is merged by agentdoc
      else
        vim.v.fcs_choice = "reload"
      end
    end,
  })
  vim.api.nvim_create_autocmd("FileChangedShellPost", {
    group = group,
    buffer = buf,
    callback = function()
      local saved = views[buf]
      views[buf] = nil
      if not saved or vim.api.nvim_get_current_buf() ~= buf then
        return
      end
      if saved.at_end then
        vim.cmd("normal! G")
      else
        vim.fn.winrestview(saved.view)
      end
    end,
  })
  vim.api.nvim_create_autocmd("BufWriteCmd", {
    group = group,
    buffer = buf,
    callback = function(args)
      write(buf, vim.fn.fnamemodify(args.file, ":p"))
    end,
  })
  map_keys(buf)
  seen[buf] = nil
  follow_status(buf)
  ensure_timer()
end

local function current_document()
  local buf = vim.api.nvim_get_current_buf()
  local path = vim.api.nvim_buf_get_name(buf)
  if path == "" or not M.is_session(buf) then
    notify("this buffer is not an agentdoc session document (no `agentdoc:` in its frontmatter)")
    return nil
  end
  M.attach(buf)
  return buf, path
end

-- Run `agentdoc ARGS…` as a job; `done(code, stderr, stdout lines)` is called on the main loop.
local function job(args, done)
  local stderr, stdout = {}, {}
  local argv = { M.config.command }
  vim.list_extend(argv, args)
  local ok, id = pcall(vim.fn.jobstart, argv, {
    stderr_buffered = true,
    stdout_buffered = true,
    on_stderr = function(_, data)
      stderr = data or {}
    end,
    on_stdout = function(_, data)
      stdout = data or {}
    end,
    on_exit = function(_, code)
      vim.schedule(function()
        local text = table.concat(vim.tbl_filter(function(l)
          return l ~= ""
        end, stderr), "\n")
        done(code, text, stdout)
      end)
    end,
  })
  if not ok or id <= 0 then
    notify("cannot run " .. M.config.command .. ": is agentdoc installed and on PATH?")
    return nil
  end
  return id
end

function M.run()
  local buf, path = current_document()
  if not buf then
    return
  end
  if jobs[buf] then
    notify("a reply is already streaming into " .. path, vim.log.levels.WARN)
    return
  end
  vim.cmd("silent update")
  local entry = {}
  entry.id = job({ "run", "--quiet", path }, function(code, stderr)
    reload(buf)
    follow_status(buf) -- while the job is still ours: its own failure is told below, once
    jobs[buf] = nil
    if entry.cancelled then
      notify("the reply was cancelled", vim.log.levels.INFO)
    elseif code ~= 0 then
      notify(stderr ~= "" and stderr or ("agentdoc run failed (exit " .. code .. ")"))
    end
  end)
  if entry.id then
    jobs[buf] = entry
  end
end

function M.cancel()
  local buf, path = current_document()
  if not buf then
    return
  end
  if jobs[buf] then
    jobs[buf].cancelled = true
  end
  local status = M.read_status(path)
  if status and BUSY[status.state] then
    quiet[buf] = true -- a cancelled reply is not "done"
  end
  job({ "cancel", path }, function(code, stderr)
    if code ~= 0 then
      notify(stderr ~= "" and stderr or "agentdoc cancel failed")
    end
  end)
end

--- Answer the tool permission request waiting in this document: `agentdoc approve` (with
--- `always`: for the rest of the session) or `agentdoc deny` (with an optional message).
function M.answer(verb, opts)
  local buf, path = current_document()
  if not buf then
    return
  end
  vim.cmd("silent update")
  local args = { verb, path }
  if verb == "approve" and opts.always then
    table.insert(args, "--always")
  elseif verb == "deny" and opts.message and opts.message ~= "" then
    vim.list_extend(args, { "--message", opts.message })
  end
  job(args, function(code, stderr)
    if code ~= 0 then
      notify(stderr ~= "" and stderr or ("agentdoc " .. verb .. " failed"))
    else
      local said = verb == "approve" and (opts.always and "allowed for the session" or "allowed")
        or "refused"
      notify("agentdoc: the tool use in " .. vim.fn.fnamemodify(path, ":t") .. " is " .. said,
        vim.log.levels.INFO)
    end
  end)
end

-- Take the last turn back (`agentdoc undo`): its reply, its file changes, the session's memory
-- of it. The buffer is saved first, so undo sees what you see; the prompt comes back pending.
--- Take the last `count` turns back (default 1); `force`: even over files changed since.
function M.undo(count, force)
  local buf, path = current_document()
  if not buf then
    return
  end
  -- Whether a reply still streams is for `agentdoc undo` to tell: it refuses, saying so.
  vim.cmd("silent update")
  local args = { "undo", path }
  if count and count > 1 then
    table.insert(args, tostring(count))
  end
  if force then
    table.insert(args, "--force")
  end
  job(args, function(code, stderr)
    reload(buf)
    if code ~= 0 then
      notify(stderr ~= "" and stderr or ("agentdoc undo failed (exit " .. code .. ")"))
    elseif count and count > 1 then
      notify(string.format("the last %d turns were taken back; the first one's prompt is "
        .. "pending again", count), vim.log.levels.INFO)
    else
      notify("the last turn was taken back; its prompt is pending again", vim.log.levels.INFO)
    end
  end)
end

--- The document's status file (docs/protocol.md), decoded, or nil.
function M.read_status(path)
  local file = status_file(path)
  if vim.fn.filereadable(file) ~= 1 then
    return nil
  end
  local ok, decoded = pcall(vim.fn.json_decode, table.concat(vim.fn.readfile(file), "\n"))
  return ok and type(decoded) == "table" and decoded or nil
end

--- For 'statusline': "agentdoc: streaming (turn 2, ~340 tokens)", or "" outside session
--- documents. Example:  set statusline+=%{v:lua.require'agentdoc'.statusline()}
function M.statusline()
  local buf = vim.api.nvim_get_current_buf()
  if not attached[buf] then
    return ""
  end
  local status = M.read_status(vim.api.nvim_buf_get_name(buf))
  if status == nil then
    return "agentdoc: idle"
  end
  local text = "agentdoc: " .. tostring(status.state)
  if status.state == "streaming" and status.turn ~= vim.NIL and status.turn then
    text = text .. string.format(" (turn %d, ~%d tokens)", status.turn, status.tokens or 0)
  elseif status.state == "error" and status.error ~= vim.NIL and status.error then
    text = text .. ": " .. tostring(status.error):sub(1, 60)
  elseif status.state == "pending" and status.held ~= vim.NIL and status.held then
    -- Why the prompt was not sent, and how to send it.
    text = text .. ": " .. tostring(status.held):sub(1, 80)
  end
  return text
end

function M.status()
  local buf, path = current_document()
  if not buf then
    return
  end
  local status = M.read_status(path)
  local message = M.statusline()
  if status and status.state == "error" and status.error ~= vim.NIL then
    message = "agentdoc: error: " .. tostring(status.error)
  end
  notify(message, vim.log.levels.INFO)
end

local function fork_name(path)
  local stem = vim.fn.fnamemodify(path, ":r")
  local candidate = stem .. "-fork.md"
  local n = 2
  while vim.fn.filereadable(candidate) == 1 do
    candidate = string.format("%s-fork-%d.md", stem, n)
    n = n + 1
  end
  return candidate
end

function M.fork(turn)
  local buf, path = current_document()
  if not buf then
    return
  end
  vim.cmd("silent update")
  local new = fork_name(path)
  local args = { "fork", path, new }
  if turn then
    vim.list_extend(args, { "--turn", tostring(turn) })
  end
  job(args, function(code, stderr)
    if code ~= 0 then
      notify(stderr ~= "" and stderr or "agentdoc fork failed")
    else
      vim.cmd("edit " .. vim.fn.fnameescape(new))
    end
  end)
end

function M.archive(keep)
  local buf, path = current_document()
  if not buf then
    return
  end
  vim.cmd("silent update")
  local args = { "archive", path }
  if keep then
    vim.list_extend(args, { "--keep", tostring(keep) })
  end
  job(args, function(code, stderr)
    if code ~= 0 then
      notify(stderr ~= "" and stderr or "agentdoc archive failed")
      return
    end
    vim.cmd("silent! checktime " .. buf)
    local archive = vim.fn.fnamemodify(path, ":t:r") .. ".archive.md"
    notify("older exchanges moved to " .. archive, vim.log.levels.INFO)
  end)
end

--- `agentdoc search QUERY` under the current folder, its hits in the quickfix list (newest
--- first; `:cnext` walks them).
function M.search(query)
  if not query or query:match("^%s*$") then
    notify("give the words to search for: :AgentdocSearch WORDS")
    return
  end
  job({ "search", "--vimgrep", query }, function(code, stderr, stdout)
    -- Exit 1 without a word on stderr is grep's "no match" (told below); with one, an error.
    if code ~= 0 and (code ~= 1 or stderr ~= "") then
      notify(stderr ~= "" and stderr or "agentdoc search failed")
      return
    end
    local lines = vim.tbl_filter(function(l)
      return l ~= ""
    end, stdout)
    vim.fn.setqflist({}, " ", {
      title = "agentdoc search " .. query,
      lines = lines,
      efm = "%f:%l:%c:%m",
    })
    if #lines == 0 then
      notify("agentdoc search: no matches for " .. query, vim.log.levels.INFO)
      return
    end
    vim.cmd("copen")
  end)
end

function M.new(path)
  local full = vim.fn.fnamemodify(path, ":p")
  job({ "new", full }, function(code, stderr)
    if code ~= 0 then
      notify(stderr ~= "" and stderr or "agentdoc new failed")
    else
      vim.cmd("edit " .. vim.fn.fnameescape(full))
      vim.cmd("normal! G")
    end
  end)
end

return M
