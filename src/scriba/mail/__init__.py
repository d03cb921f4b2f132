"""Play by e-mail: letters in (SMTP/LMTP server, pipe, IMAP), replies and notices out.

Every way in goes through :class:`scriba.mail.intake.Intake`; the letters are kept by the
service's mailroom and the answers written to the service's outbox.
"""
