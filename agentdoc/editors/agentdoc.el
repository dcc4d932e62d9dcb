;;; agentdoc.el --- Emacs settings for agentdoc session documents (no package needed)

;; Load it from your init file:  (load "~/path/to/agentdoc.el")
;; (`agentdoc editor emacs` prints where the installed copy is.)
;;
;; It applies to session documents only (markdown files whose frontmatter has `agentdoc:`),
;; in `markdown-mode', `gfm-mode' or any other mode for .md files:
;; - auto-revert reloads the document while agentdoc streams a reply into it; a buffer with
;;   unsaved changes is not reverted, and saving it is safe: agentdoc merges your save with
;;   the reply it is writing.
;; - C-c a r saves and sends the prompt (agentdoc run, as a process), C-c a c cancels the
;;   running reply, C-c a s shows the status. When agentdoc fails, its error is shown in the
;;   echo area (and kept in *Messages*). With `agentdoc watch` running you only need to save.

(require 'autorevert)
(require 'subr-x)

(defvar agentdoc-command "agentdoc"
  "The agentdoc executable.")

(defun agentdoc-session-document-p ()
  "Non-nil if this buffer's frontmatter has an `agentdoc:' key."
  (save-excursion
    (save-restriction
      (widen)
      (goto-char (point-min))
      (when (looking-at "---[ \t]*$")
        (forward-line 1)
        (catch 'found
          (while (and (not (eobp)) (< (line-number-at-pos) 200))
            (cond ((looking-at "\\(---\\|\\.\\.\\.\\)[ \t]*$") (throw 'found nil))
                  ((looking-at "agentdoc[ \t]*:") (throw 'found t)))
            (forward-line 1))
          nil)))))

(defun agentdoc--file ()
  (or buffer-file-name (user-error "This buffer is not visiting a file")))

(defun agentdoc--sentinel (process event)
  "Show agentdoc's error when PROCESS ends badly; revert the document either way."
  (unless (process-live-p process)
    (let ((output (process-buffer process))
          (document (process-get process 'agentdoc-buffer)))
      (when (and (/= (process-exit-status process) 0) (buffer-live-p output))
        (let ((text (string-trim (with-current-buffer output (buffer-string)))))
          (message "%s" (if (string-empty-p text)
                            (format "agentdoc: %s" (string-trim event))
                          text))))
      (when (buffer-live-p output)
        (kill-buffer output))
      (when (and (buffer-live-p document) (not (buffer-modified-p document)))
        (with-current-buffer document
          (revert-buffer t t t))))))

(defun agentdoc-run ()
  "Save, then send the pending prompt of this document."
  (interactive)
  (save-buffer)
  (let ((process (make-process
                  :name "agentdoc"
                  :buffer (generate-new-buffer " *agentdoc run*")
                  :command (list agentdoc-command "run" "--quiet" (agentdoc--file))
                  :connection-type 'pipe
                  :noquery t
                  :sentinel #'agentdoc--sentinel)))
    (process-put process 'agentdoc-buffer (current-buffer))
    process))

(defun agentdoc-cancel ()
  "Cancel the reply streaming into this document."
  (interactive)
  (with-temp-buffer
    (unless (zerop (call-process agentdoc-command nil t nil "cancel" (agentdoc--file)))
      (message "%s" (string-trim (buffer-string))))))

(defun agentdoc-status ()
  "Show what agentdoc is doing with this document."
  (interactive)
  (message "%s" (string-trim
                 (with-output-to-string
                   (call-process agentdoc-command nil standard-output nil
                                 "status" (agentdoc--file))))))

(defvar agentdoc-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c a r") #'agentdoc-run)
    (define-key map (kbd "C-c a c") #'agentdoc-cancel)
    (define-key map (kbd "C-c a s") #'agentdoc-status)
    map))

(define-minor-mode agentdoc-mode
  "Follow agentdoc's writes into this session document; keys to run and cancel."
  :lighter " agentdoc"
  :keymap agentdoc-mode-map
  (when agentdoc-mode
    (setq-local auto-revert-interval 0.5)
    (setq-local auto-revert-verbose nil)
    (auto-revert-mode 1)))

(defun agentdoc-setup ()
  "Turn on `agentdoc-mode' if this buffer is a session document."
  (when (and buffer-file-name (agentdoc-session-document-p))
    (agentdoc-mode 1)))

(add-hook 'markdown-mode-hook #'agentdoc-setup)
(add-hook 'gfm-mode-hook #'agentdoc-setup)
;; Without markdown-mode installed, .md files open in text-mode (or fundamental-mode).
(add-hook 'find-file-hook
          (lambda ()
            (when (and buffer-file-name
                       (string-match-p "\\.\\(md\\|markdown\\)\\'" buffer-file-name)
                       (not agentdoc-mode))
              (agentdoc-setup))))

;;; agentdoc.el ends here
