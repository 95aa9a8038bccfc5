/**
 * E-mail addresses as Smarter's e-mail service checks them (`smarter/smarter/apps/infrastructure/services/email.py`).
 * Apart from the SMTP adapter, so that the tasks can check an address without loading nodemailer.
 */

/** `SmarterValidator.VALID_EMAIL_PATTERN` (`smarter/smarter/lib/django/validators.py`). */
const VALID_EMAIL = /^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$/;

/** `SmarterValidator.is_valid_email`. */
export function isValidEmail(address: string): boolean {
  return VALID_EMAIL.test(address);
}

/**
 * `EmailService.admin_bcc`: the admin's blind copy, unless there is no valid admin address or the admin is already
 * a recipient (who would otherwise get the message twice).
 */
export function adminBcc(admin: string, recipients: readonly string[]): string[] {
  if (!admin || !isValidEmail(admin)) return [];
  return recipients.some((r) => r.toLowerCase() === admin.toLowerCase()) ? [] : [admin];
}
