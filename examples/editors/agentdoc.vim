" agentdoc settings for Vim (8.2+) and Neovim: no plugin needed.
" Load it from your vimrc / init.vim:   source ~/path/to/agentdoc.vim
"
" What it does:
" - reloads a document while agentdoc streams a reply into it (autoread + a checktime timer);
" - never throws away your unsaved typing: if the buffer has changes, it is not reloaded;
"   save it anyway (:w, and answer y when Vim says the file changed since reading it): while a
"   reply streams, agentdoc merges your save with the reply it is writing;
" - <Leader>ar sends the prompt now (agentdoc run), <Leader>ac cancels the running reply,
"   <Leader>as shows the status. With `agentdoc watch` running you only need to save.

set autoread

function! s:AgentdocChanged() abort
  if &modified
    " Keep the user's buffer; their next :w! is merged by agentdoc.
    let v:fcs_choice = ''
    echohl WarningMsg | echo 'agentdoc: the reply changed on disk; save (answer y) and agentdoc merges your edits' | echohl None
  else
    let v:fcs_choice = 'reload'
  endif
endfunction

augroup agentdoc
  autocmd!
  autocmd FileChangedShell *.md call s:AgentdocChanged()
  autocmd FocusGained,BufEnter,CursorHold,CursorHoldI *.md silent! checktime
augroup END

if has('timers') && !exists('s:agentdoc_timer')
  let s:agentdoc_timer = timer_start(250, {-> execute('silent! checktime')}, {'repeat': -1})
endif

nnoremap <silent> <Leader>ar :update <Bar> call system('agentdoc run ' . shellescape(expand('%:p')) . ' >/dev/null 2>&1 &')<CR>
nnoremap <silent> <Leader>ac :call system('agentdoc cancel ' . shellescape(expand('%:p')))<CR>
nnoremap <Leader>as :echo system('agentdoc status ' . shellescape(expand('%:p')))<CR>
