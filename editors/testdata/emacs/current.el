;;; current.el --- darman lsp from Emacs 30 and its built-in eglot, batch mode  -*- lexical-binding: t -*-
;; The init file the test wrote holds the docs' snippet exactly as printed
;; (go-ts-mode for .go files, darman as its server); no package from ELPA.
;; main.go opens in go-ts-mode and eglot starts darman from the snippet's
;; entry. MODE=edit: the code actions of a `darman:` line, "darman: do it"
;; run with eglot-execute, the permission answered through completing-read,
;; the edit (non-ASCII) in the buffer unsaved, undo restoring the text; then
;; a prompt of one's own (darman.prompt) whose edit is saved. MODE=complete:
;; completion-at-point lists darman's item and inserts it.
;; Writes key=value lines to $OUT (editors/emacs_test.go reads them).
(require 'cl-lib)

(defvar darman-test--results nil)
(defun darman-test--record (k v) (push (format "%s=%s" k v) darman-test--results))
(defun darman-test--finish ()
  (with-temp-file (getenv "OUT")
    (insert (mapconcat #'identity (reverse darman-test--results) "\n") "\n"))
  (kill-emacs 0))

;; The person allows what darman asks, once, and confirms eglot's questions.
(fset 'completing-read
      (lambda (prompt &rest _)
        (darman-test--record "asked" (replace-regexp-in-string "\n.*" "" (substring-no-properties prompt)))
        "Allow once"))
(fset 'y-or-n-p (lambda (&rest _) t))
(fset 'yes-or-no-p (lambda (&rest _) t))

(defun darman-test--wait (what cond &optional secs)
  (with-timeout ((or secs 60) (error "%s never happened" what))
    (while (not (funcall cond))
      (accept-process-output nil 0.05))))

(defun darman-test--disk (file)
  (with-temp-buffer (insert-file-contents file) (buffer-string)))

(condition-case err
    (let* ((file (expand-file-name "main.go" default-directory))
           (buf (find-file file)))
      (darman-test--record "version" emacs-version)
      (darman-test--record "mode" major-mode)
      (darman-test--record "eglot" (locate-library "eglot"))
      ;; What M-x eglot or eglot-ensure (from the mode hook, outside batch
      ;; mode) do: load eglot, which runs the snippet's with-eval-after-load,
      ;; and start the server its entry names for the buffer's mode.
      (require 'eglot)
      (let ((server (apply #'eglot (eglot--guess-contact))))
        (darman-test--record "connected" (if (jsonrpc-running-p server) "true" "false"))
        (with-current-buffer buf
          (if (equal (getenv "MODE") "complete")
              (progn
                ;; The end of line 7, `\t_ = "é"; fmt.`.
                (goto-char (point-min))
                (forward-line 6)
                (end-of-line)
                (eglot--signal-textDocument/didChange)
                (let* ((capf (eglot-completion-at-point))
                       (labels (all-completions "" (nth 2 capf))))
                  (darman-test--record "items" (mapconcat #'substring-no-properties labels ",")))
                (let ((completion-at-point-functions '(eglot-completion-at-point)))
                  (completion-at-point))
                (darman-test--record "line" (buffer-substring-no-properties (line-beginning-position) (line-end-position))))
            (let* ((original (buffer-string))
                   (fixed (getenv "FIXED"))
                   (actions (jsonrpc-request
                             server :textDocument/codeAction
                             (list :textDocument (list :uri (eglot-path-to-uri file))
                                   :range (list :start (list :line 5 :character 0) :end (list :line 5 :character 0))
                                   :context (list :diagnostics []))))
                   (doit (cl-find "darman: do it" actions :key (lambda (a) (plist-get a :title)) :test #'equal)))
              (darman-test--record "actions" (mapconcat (lambda (a) (plist-get a :title)) actions ","))
              (unless doit (error "no do it action"))
              (undo-boundary)
              (eglot-execute server doit)
              (darman-test--wait "the edit in the buffer"
                                 (lambda () (with-current-buffer buf (string-match-p (regexp-quote fixed) (buffer-string)))))
              (darman-test--record "buffer_changed" "true")
              (darman-test--record "modified" (if (buffer-modified-p) "true" "false"))
              (darman-test--record "disk_unchanged" (if (equal (darman-test--disk file) original) "true" "false"))
              (undo-boundary)
              (undo)
              (darman-test--record "undo_restores" (if (equal (buffer-string) original) "true" "false"))
              ;; A prompt of one's own, as M-x eglot-execute would send it.
              (eglot-execute server (list :title "prompt" :command "darman.prompt"
                                          :arguments (vector (list :prompt "comment main"))))
              (darman-test--wait "the prompt's edit"
                                 (lambda () (with-current-buffer buf (string-match-p "// Greets the world" (buffer-string)))))
              (save-buffer)
              (darman-test--record "saved" (if (equal (darman-test--disk file) (buffer-string)) "true" "false")))))
        (eglot-shutdown server nil 20)
        (darman-test--record "stopped" (if (jsonrpc-running-p server) "false" "true"))))
  (error (darman-test--record "error" (error-message-string err))))
(darman-test--finish)
