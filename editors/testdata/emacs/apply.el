;;; apply.el --- darman-apply-block from Emacs 30 and its built-in eglot, batch mode  -*- lexical-binding: t -*-
;; The init file holds the docs' snippet as printed; the package
;; editors/emacs is on load-path ($DARMAN_EL) and required. main.go opens
;; in go-ts-mode, eglot starts darman, a prompt's answer (a fenced block
;; naming main.go) streams into *darman*. darman-apply-block with point
;; outside any block says so; with point inside the block the permission
;; is asked through completing-read, answered $CHOICE. With "Allow once"
;; main.go (buffer and disk) holds the block's code and the turn's revert
;; (darman.turn.revert) takes it back; with "Reject" it is unchanged. A
;; block whose fence names no file is applied to the file typed at
;; read-file-name ($INPUT); one naming a secret ($FILE, .env) is refused by
;; darman, and the user is told.
;; Writes key=value lines to $OUT (editors/emacs_test.go reads them).
(require 'cl-lib)
(add-to-list 'load-path (getenv "DARMAN_EL"))
(require 'darman)

(defvar darman-test--results nil)
(defun darman-test--record (k v) (push (format "%s=%s" k v) darman-test--results))
(defun darman-test--finish ()
  (with-temp-file (getenv "OUT")
    (insert (mapconcat #'identity (reverse darman-test--results) "\n") "\n"))
  (kill-emacs 0))

(fset 'completing-read
      (lambda (prompt &rest _)
        (darman-test--record "asked" (replace-regexp-in-string "\n.*" "" (substring-no-properties prompt)))
        (getenv "CHOICE")))
(fset 'read-file-name
      (lambda (prompt &optional _dir default &rest _)
        (darman-test--record "input" (concat prompt (file-name-nondirectory (or default ""))))
        (getenv "INPUT")))
(fset 'y-or-n-p (lambda (&rest _) t))
(fset 'yes-or-no-p (lambda (&rest _) t))

(defvar darman-test--messages nil)
(advice-add 'message :after
            (lambda (fmt &rest args)
              (when fmt (push (apply #'format-message fmt args) darman-test--messages))))
(defun darman-test--told (text)
  (cl-find-if (lambda (m) (string-match-p (regexp-quote text) m)) darman-test--messages))

(defun darman-test--wait (what cond &optional secs)
  (with-timeout ((or secs 60) (error "%s never happened" what))
    (while (not (funcall cond))
      (accept-process-output nil 0.05))))

(defun darman-test--disk (file)
  (with-temp-buffer (insert-file-contents file) (buffer-string)))

(condition-case err
    (let* ((file (expand-file-name "main.go" default-directory))
           (buf (find-file file))
           (original (darman-test--disk file))
           (code (getenv "CODE")))
      (darman-test--record "version" emacs-version)
      (darman-test--record "command" (if (commandp 'darman-apply-block) "true" "false"))
      (require 'eglot)
      (let ((server (apply #'eglot (eglot--guess-contact))))
        (eglot-execute server (list :title "prompt" :command "darman.prompt"
                                    :arguments (vector (list :prompt "fix main"))))
        (darman-test--wait "the answer in *darman*"
                           (lambda () (and (equal darman-last-state "idle")
                                           (get-buffer "*darman*")
                                           (with-current-buffer "*darman*"
                                             (string-match-p "Apply it\\." (buffer-string))))))
        (with-current-buffer "*darman*"
          ;; Outside the block: nothing is asked, the user is told why.
          (goto-char (point-min))
          (darman-test--record
           "outside" (condition-case e (progn (darman-apply-block) "applied")
                       (user-error (if (string-match-p "no code block at point" (cadr e)) "true" (cadr e)))))
          (search-forward "Println")
          (darman-apply-block))
        (let ((told (concat "applied to " (getenv "FILE"))))
          (darman-test--wait "the answer to darman-apply-block" (lambda () (darman-test--told told)))
          (darman-test--record "told" (darman-test--told told)))
        (darman-test--record "disk_is_code" (if (equal (darman-test--disk file) code) "true" "false"))
        (darman-test--record "disk_unchanged" (if (equal (darman-test--disk file) original) "true" "false"))
        (darman-test--record "buffer_is_code" (if (equal (with-current-buffer buf (buffer-string)) code) "true" "false"))
        (when (equal (getenv "REVERT") "1")
          ;; The edit belongs to the session's last turn: its revert takes it back.
          (let ((session (with-current-buffer "*darman*"
                           (get-text-property (point-min) 'darman-session))))
            (jsonrpc-request server :workspace/executeCommand
                             (list :command "darman.turn.revert" :arguments (vector (list :sessionId session)))
                             :timeout 30)
            (darman-test--wait "the revert on disk" (lambda () (equal (darman-test--disk file) original)))
            (darman-test--record "reverted" "true")))
        (eglot-shutdown server nil 20)
        (darman-test--record "stopped" (if (jsonrpc-running-p server) "false" "true"))))
  (error (darman-test--record "error" (error-message-string err))))
(darman-test--finish)
