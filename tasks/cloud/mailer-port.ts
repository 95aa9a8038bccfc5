/** SMTP: the e-mails the LLMClient tasks send. */

export interface Mail {
  to: string[];
  subject: string;
  text: string;
  html?: string;
}

export interface Mailer {
  /** True once the server accepted it; false when SMTP is not configured (nothing sent, logged). */
  send(mail: Mail): Promise<boolean>;
}
