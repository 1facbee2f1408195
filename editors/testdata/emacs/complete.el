;;; complete.el --- darman's completion item in Emacs 28 + eglot 1.9, batch mode  -*- lexical-binding: t -*-
;; darman.json sets completion.items: darman answers textDocument/completion
;; with its suggestion as an item. eglot's completion-at-point lists it, and
;; completing the line inserts it. Writes key=value lines to $OUT
;; (editors/completion_test.go reads them).
(require 'eglot)
(require 'cl-lib)
(load (expand-file-name "darman.el" (getenv "EMACS_HELPER_DIR")))

(defvar darman-test--results nil)
(defun darman-test--record (k v) (push (format "%s=%s" k v) darman-test--results))
(defun darman-test--finish ()
  (with-temp-file (getenv "OUT")
    (insert (mapconcat #'identity (reverse darman-test--results) "\n") "\n"))
  (kill-emacs 0))

(fset 'y-or-n-p (lambda (&rest _) t))
(fset 'yes-or-no-p (lambda (&rest _) t))

(condition-case err
    (let* ((root (file-name-as-directory (getenv "WORKSPACE")))
           (buf (find-file (expand-file-name "main.go" root)))
           (server (eglot '(fundamental-mode) (cons 'transient root) 'eglot-lsp-server
                          (list (getenv "DARMAN_BIN") "lsp" "--stdio") "go")))
      (darman-test--record "connected" (if (jsonrpc-running-p server) "true" "false"))
      (darman-test--record "provider" (if (eglot--server-capable :completionProvider) "true" "false"))
      (with-current-buffer buf
        ;; The end of line 7, `\t_ = "é"; fmt.`.
        (goto-char (point-min))
        (forward-line 6)
        (end-of-line)
        ;; What eglot's idle timer does outside batch mode: send the didChange.
        (eglot--signal-textDocument/didChange)
        (let* ((capf (eglot-completion-at-point))
               (table (nth 2 capf))
               (labels (all-completions "" table)))
          (darman-test--record "items" (mapconcat #'substring-no-properties labels ",")))
        ;; The one candidate completes at once, and eglot applies its edit.
        (let ((completion-at-point-functions '(eglot-completion-at-point)))
          (completion-at-point))
        (darman-test--record "line" (buffer-substring-no-properties (line-beginning-position) (line-end-position))))
      (eglot-shutdown server nil 20)
      (darman-test--record "stopped" (if (jsonrpc-running-p server) "false" "true")))
  (error (darman-test--record "error" (error-message-string err))))
(darman-test--finish)
