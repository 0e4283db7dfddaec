/** What the mailer is configured with (src/config.ts reads it from the environment; mail owns its shape). */

export interface MailConfig {
  /** SMTP_URL (smtp:// or smtps://, credentials in the URL); unset, each message is written as an .eml file under `dir`. */
  smtpUrl: string | undefined;
  /** MAIL_FROM: the sender of every message (default `STORE_NAME <orders@BASE_URL's host>`). */
  from: string;
  /** MERCHANT_EMAIL: who is told of each new order; unset, no merchant mail. */
  merchantEmail: string | undefined;
  /** Where messages go without SMTP_URL: DATA_DIR/mail. */
  dir: string;
}
