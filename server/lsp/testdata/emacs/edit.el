;;; edit.el --- drives darman lsp from Emacs 28 + eglot 1.9 in batch mode  -*- lexical-binding: t -*-
;; MODE=plain: eglot alone; darman writes the disk, the buffer is reverted.
;; MODE=snippet: editors/emacs/darman.el opts into applyEditAndSave.
;; Writes key=value lines to $OUT (server/lsp/editors_test.go reads them).
(require 'eglot)
(require 'cl-lib)

(defvar darman-test--results nil)
(defun darman-test--record (k v) (push (format "%s=%s" k v) darman-test--results))
(defun darman-test--finish ()
  (with-temp-file (getenv "OUT")
    (insert (mapconcat #'identity (reverse darman-test--results) "\n") "\n"))
  (kill-emacs 0))

(defvar darman-test--state nil)
(if (equal (getenv "MODE") "snippet")
    (load (expand-file-name "darman.el" (getenv "HELPER_DIR")))
  ;; Plain eglot, plus the session updates, only so that the test knows
  ;; when the turn ended.
  (cl-defmethod eglot-client-capabilities :around (_server)
    (let ((caps (cl-call-next-method)))
      (plist-put caps :experimental '(:darman (:sessionUpdates t)))))
  (cl-defmethod eglot-handle-notification
    (_server (_method (eql darman/sessionUpdate)) &key update &allow-other-keys)
    (when (equal (plist-get update :sessionUpdate) "state_update")
      (setq darman-test--state (plist-get update :state)))))

(defun darman-test--state ()
  (if (boundp 'darman-last-state) darman-last-state darman-test--state))

;; The person answers darman's questions: Allow once.
(fset 'completing-read
      (lambda (prompt &rest _)
        (darman-test--record "asked" (replace-regexp-in-string "\n.*" "" (substring-no-properties prompt)))
        "Allow once"))
(fset 'y-or-n-p (lambda (&rest _) t))
(fset 'yes-or-no-p (lambda (&rest _) t))

(condition-case err
    (let* ((root (file-name-as-directory (getenv "WORKSPACE")))
           (buf (find-file (expand-file-name "main.go" root)))
           (server (eglot '(fundamental-mode) (cons 'transient root) 'eglot-lsp-server
                          (list (getenv "DARMAN_BIN") "lsp" "--stdio") "go")))
      (darman-test--record "connected" (if (jsonrpc-running-p server) "true" "false"))
      (let ((actions (jsonrpc-request
                      server :textDocument/codeAction
                      (list :textDocument (list :uri (eglot--path-to-uri (buffer-file-name buf)))
                            :range (list :start (list :line 4 :character 0) :end (list :line 6 :character 1))
                            :context (list :diagnostics [])))))
        (darman-test--record "actions" (mapconcat (lambda (a) (plist-get a :title)) actions ",")))
      (eglot-execute-command server "darman.prompt" (vector (list :prompt "fix main.go so it builds")))
      (with-timeout (90 (darman-test--record "error" "the turn did not end"))
        (while (not (member (darman-test--state) '("idle" "failed" "cancelled")))
          (accept-process-output nil 0.05)))
      (darman-test--record "state" (darman-test--state))
      (with-current-buffer buf
        (unless (equal (getenv "MODE") "snippet")
          (revert-buffer t t t)) ; what auto-revert-mode does outside batch mode
        (darman-test--record "buffer_changed" (if (string-match-p "hello from darman" (buffer-string)) "true" "false"))
        (darman-test--record "modified" (if (buffer-modified-p) "true" "false")))
      ;; shutdown and exit; eglot waits for the process to end, after it
      ;; stopped what it started (language servers).
      (eglot-shutdown server nil 20)
      (darman-test--record "stopped" (if (jsonrpc-running-p server) "false" "true")))
  (error (darman-test--record "error" (error-message-string err))))
(darman-test--finish)
