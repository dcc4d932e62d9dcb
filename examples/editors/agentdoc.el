;;; agentdoc.el --- Emacs settings for agentdoc documents (no package needed)

;; Load it from your init file:  (load "~/path/to/agentdoc.el")
;;
;; - auto-revert reloads a document while agentdoc streams a reply into it; a buffer with
;;   unsaved changes is not reverted, and saving it is safe: agentdoc merges your save with
;;   the reply it is writing.
;; - C-c a r sends the prompt now, C-c a c cancels the running reply, C-c a s shows the status.
;;   With `agentdoc watch` running you only need to save.

(require 'autorevert)

(defun agentdoc--file ()
  (or buffer-file-name (user-error "This buffer is not visiting a file")))

(defun agentdoc-run ()
  "Save, then send the pending prompt of this document."
  (interactive)
  (save-buffer)
  (start-process "agentdoc" "*agentdoc*" "agentdoc" "run" (agentdoc--file)))

(defun agentdoc-cancel ()
  "Cancel the reply streaming into this document."
  (interactive)
  (call-process "agentdoc" nil "*agentdoc*" nil "cancel" (agentdoc--file)))

(defun agentdoc-status ()
  "Show what agentdoc is doing with this document."
  (interactive)
  (message "%s" (with-output-to-string
                  (call-process "agentdoc" nil standard-output nil "status" (agentdoc--file)))))

(defun agentdoc-setup ()
  "Buffer settings for markdown files that may be agentdoc session documents."
  (setq-local auto-revert-interval 0.5)
  (setq-local auto-revert-verbose nil)
  (setq-local auto-revert-use-notify t)
  (auto-revert-mode 1)
  (local-set-key (kbd "C-c a r") #'agentdoc-run)
  (local-set-key (kbd "C-c a c") #'agentdoc-cancel)
  (local-set-key (kbd "C-c a s") #'agentdoc-status))

(add-hook 'markdown-mode-hook #'agentdoc-setup)
(add-hook 'gfm-mode-hook #'agentdoc-setup)

;;; agentdoc.el ends here
