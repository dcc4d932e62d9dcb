" agentdoc settings for Vim (8.2+) and Neovim: no plugin manager needed.
" Load it from your vimrc / init.vim:   source ~/path/to/agentdoc.vim
" (`agentdoc editor vim` prints where the installed copy is. Neovim users may prefer the
" plugin: `agentdoc editor neovim`.)
"
" It applies only to session documents: markdown files whose frontmatter has `agentdoc:`.
" In those buffers:
" - the reply is reloaded as agentdoc streams it in (autoread and a checktime timer); a buffer
"   with unsaved changes is never reloaded over your typing;
" - saving never asks "the file has changed since reading it": while a reply streams, :w
"   writes the buffer in place and agentdoc merges it with the reply it is writing. (The
"   write is done by this recipe, as UTF-8, keeping the file's line endings, BOM and final
"   newline; 'backup' and 'writebackup' are not used for these buffers.)
" - <Leader>ar saves and sends the prompt (agentdoc run, as a background job), <Leader>ac
"   cancels the running reply, <Leader>as shows the status. Errors are shown as messages
"   (:messages keeps them); with `agentdoc watch` running you only need to save.
" What remains: Vim reloads the file only when the buffer is unmodified, so while you type
" the reply appears after your next save (the save is merged, then reloaded).

set autoread

let s:agentdoc = get(g:, 'agentdoc_command', 'agentdoc')

function! s:IsSessionDocument() abort
  " A `---` first line, then `agentdoc:` as a top-level key before the closing `---`.
  if getline(1) !~# '^---\s*$'
    return 0
  endif
  for lnum in range(2, min([line('$'), 200]))
    let text = getline(lnum)
    if text =~# '^\(---\|\.\.\.\)\s*$'
      return 0
    elseif text =~# '^agentdoc\s*:'
      return 1
    endif
  endfor
  return 0
endfunction

function! s:Setup() abort
  if !s:IsSessionDocument()
    return
  endif
  let b:agentdoc = 1
  setlocal autoread
  let b:agentdoc_mtime = getftime(expand('%:p'))
  augroup agentdoc_buffer
    autocmd! * <buffer>
    autocmd FileChangedShell <buffer> call s:Changed()
    autocmd BufWriteCmd <buffer> call s:Write(expand('<afile>:p'))
  augroup END
  nnoremap <buffer> <silent> <Leader>ar :call <SID>Run()<CR>
  nnoremap <buffer> <silent> <Leader>ac :call <SID>Cancel()<CR>
  nnoremap <buffer> <Leader>as :echo system(<SID>Command(['status', expand('%:p')]))<CR>
endfunction

function! s:Changed() abort
  if &modified
    " Keep the buffer: the next :w is merged by agentdoc.
    let v:fcs_choice = ''
  else
    let v:fcs_choice = 'reload'
  endif
endfunction

function! s:Write(file) abort
  " Written here rather than by Vim, because Vim asks before overwriting a file that changed
  " since it was read, and during a reply it changes several times a second.
  let lines = getline(1, '$')
  if &fileformat ==# 'dos'
    call map(lines, 'v:val . "\r"')
  endif
  if &bomb && !empty(lines)
    let lines[0] = "\xef\xbb\xbf" . lines[0]
  endif
  if &endofline || &fixendofline
    call add(lines, '')
  endif
  if writefile(lines, a:file, 'b') != 0
    echohl ErrorMsg | echomsg 'agentdoc: could not write ' . a:file | echohl None
    return
  endif
  if a:file ==# expand('%:p')
    setlocal nomodified
    let b:agentdoc_mtime = getftime(a:file)
  endif
endfunction

function! s:Command(args) abort
  return join(map([s:agentdoc] + a:args, 'shellescape(v:val)'), ' ')
endfunction

function! s:Notify(message) abort
  if has('nvim')
    call v:lua.vim.notify(a:message, 4)
  else
    echohl ErrorMsg | echomsg a:message | echohl None
  endif
endfunction

function! s:Finished(output, code) abort
  if a:code != 0
    let text = join(filter(copy(a:output), 'v:val !=# ""'), "\n")
    call s:Notify(empty(text) ? 'agentdoc run failed (exit ' . a:code . ')' : text)
  endif
  silent! checktime
endfunction

function! s:Run() abort
  update
  let argv = [s:agentdoc, 'run', '--quiet', expand('%:p')]
  let output = []
  if has('nvim')
    call jobstart(argv, {
          \ 'on_stderr': {_, data, __ -> extend(output, data)},
          \ 'on_exit': {_, code, __ -> s:Finished(output, code)}})
  else
    call job_start(argv, {
          \ 'err_cb': {_, line -> add(output, line)},
          \ 'exit_cb': {_, code -> s:Finished(output, code)},
          \ 'in_io': 'null', 'out_io': 'null'})
  endif
endfunction

function! s:Cancel() abort
  let result = system(s:Command(['cancel', expand('%:p')]))
  if v:shell_error
    call s:Notify(trim(result))
  endif
endfunction

function! s:CheckSessionBuffers() abort
  for info in getbufinfo({'bufloaded': 1})
    if getbufvar(info.bufnr, 'agentdoc', 0)
      execute 'silent! checktime ' . info.bufnr
    endif
  endfor
endfunction

augroup agentdoc
  autocmd!
  autocmd BufReadPost,BufNewFile *.md,*.markdown call s:Setup()
  " A document that became a session document (`agentdoc:` added, then saved).
  autocmd BufWritePost *.md,*.markdown if !get(b:, 'agentdoc', 0) | call s:Setup() | endif
  autocmd FocusGained,BufEnter,CursorHold,CursorHoldI * if get(b:, 'agentdoc', 0) | silent! checktime | endif
augroup END

" Buffers loaded before this file was sourced (`vim -c 'source …' notes.md`).
let s:current = bufnr('%')
for s:info in getbufinfo({'bufloaded': 1})
  if s:info.name =~# '\.\(md\|markdown\)$' && !getbufvar(s:info.bufnr, 'agentdoc', 0)
    execute 'silent! noautocmd buffer ' . s:info.bufnr
    call s:Setup()
  endif
endfor
execute 'silent! noautocmd buffer ' . s:current
unlet! s:info s:current

if has('timers') && !exists('s:agentdoc_timer')
  let s:agentdoc_timer = timer_start(250, {-> s:CheckSessionBuffers()}, {'repeat': -1})
endif
