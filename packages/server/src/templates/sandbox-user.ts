/** The unprivileged account every template's sandboxes run commands as (made by the base recipe). */
export const SANDBOX_USER = 'user';
/** Its home: where commands start and relative file paths point unless a template's workdir says otherwise. */
export const SANDBOX_HOME = '/home/user';
