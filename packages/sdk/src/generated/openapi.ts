// Generated from the server's OpenAPI document by packages/sdk/scripts/generate-types.ts.
// Do not edit: run `npm run generate -w @sandpit/sdk` after changing a route or schema.

export interface paths {
    "/api-keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the team's live API keys */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            api_keys: {
                                /** Format: date-time */
                                created_at: string;
                                id: string;
                                name: string;
                                permissions: string[];
                                /** @description First characters of the key, to recognise it */
                                prefix: string;
                            }[];
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        /** Create an API key with a subset of the caller's permissions (needs keys:manage) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description Key shape: 'sandpit' (sp_..., the default) or 'e2b' (e2b_ and 40 hex digits, for E2B SDKs that check it) */
                        format?: "sandpit" | "e2b";
                        name: string;
                        /** @description Default: every permission of the calling key */
                        permissions?: string[];
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** Format: date-time */
                            created_at: string;
                            id: string;
                            /** @description Shown once; stored only hashed */
                            key: string;
                            name: string;
                            permissions: string[];
                            /** @description First characters of the key, to recognise it */
                            prefix: string;
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api-keys/{key_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Revoke an API key */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    key_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/audit-log": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The team's audit log, newest first: every call that changed something (needs audit:read, which admins and owners hold)
         * @description Who (key, user), what (action, resource), when, from where (address, user agent) and the HTTP status; never a request body, secret value or token. Entries are kept SANDPIT_AUDIT_RETENTION_DAYS (default 90) and cannot be changed or deleted through the API.
         */
        get: {
            parameters: {
                query?: {
                    action?: string;
                    /** @description An API key id or a user id */
                    actor?: string;
                    cursor?: string;
                    /** @description Page size, 1 to 1000 (default 100) */
                    limit?: string;
                    resource_id?: string;
                    /** @description sandbox, snapshot, template, secret, api_key, member, webhook, console_session */
                    resource_type?: string;
                    /** @description RFC 3339 time: entries at or after it */
                    since?: string;
                    /** @description RFC 3339 time: entries before it */
                    until?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            entries: components["schemas"]["AuditEntry"][];
                            next_cursor?: string;
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/billing/summary": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Charges, credits and usage of the calling team's current billing period
         * @description The team is the API key's. Needs billing:read and the tenant_usage_dashboard rollout gate (on unless the operator disabled it for the team); 403 `forbidden` otherwise. Shadow mode: charges are computed at the team's current plan rates, credits come from the local trial grant, nothing is collected.
         */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["BillingSummary"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/exec": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Data plane: run a command to completion (8 MiB retained output) */
        post: {
            parameters: {
                query?: never;
                header?: {
                    "x-access-token"?: string;
                    /** @description Not needed on the per-sandbox host */
                    "x-platform-sandbox-id"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        args?: string[];
                        /** @description Run by /bin/sh -c unless args is given */
                        command: string;
                        env?: {
                            [key: string]: string;
                        };
                        /** @description Default 30. At the limit the whole process group is killed and exit_code is 124 */
                        timeout_s?: number;
                        /** @description Default /home/user */
                        working_dir?: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            exit_code: number;
                            stderr: string;
                            stdout: string;
                            /** @description Present and true when combined output exceeded 8 MiB */
                            truncated?: boolean;
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/exec/stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Data plane: run a command and stream its output as server-sent events
         * @description text/event-stream: each `data: ` line is one JSON event; the final event has finished: true; a `: keepalive` comment every 15 s
         */
        post: {
            parameters: {
                query?: never;
                header?: {
                    "x-access-token"?: string;
                    /** @description Not needed on the per-sandbox host */
                    "x-platform-sandbox-id"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        args?: string[];
                        /** @description Run by /bin/sh -c unless args is given */
                        command: string;
                        env?: {
                            [key: string]: string;
                        };
                        /** @description Default 30. At the limit the whole process group is killed and exit_code is 124 */
                        timeout_s?: number;
                        /** @description Default /home/user */
                        working_dir?: string;
                    };
                };
            };
            responses: {
                /** @description text/event-stream: each `data: ` line is one JSON event; the final event has finished: true; a `: keepalive` comment every 15 s */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/event-stream": {
                            error?: string;
                            exit_code?: number;
                            finished?: boolean;
                            stderr?: string;
                            stdout?: string;
                            /** Format: date-time */
                            timestamp: string;
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/files": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Download a file (streamed, application/octet-stream, with Content-Length)
         * @description Errors: 400 bad_request (empty path or NUL byte; a directory where a file is expected or the reverse), 401, 403 forbidden (permission denied for `user`), 404 not_found (no such file or directory), 409 conflict (exists, or a non-empty directory), 503 (agent unreachable).
         */
        get: {
            parameters: {
                query: {
                    /** @description Path inside the sandbox; relative paths are relative to /home/user. Resolved as `user` (permissions and symlinks as that user sees them). */
                    path: string;
                };
                header?: {
                    "x-access-token"?: string;
                    /** @description Not needed on the per-sandbox host */
                    "x-platform-sandbox-id"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description The file content */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/octet-stream": string;
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        /**
         * Upload a file: the raw request body becomes the file content (streamed)
         * @description Any Content-Type; the body is stored as is. Missing parent directories are created; an existing file is replaced atomically and keeps its permissions. The data goes to a temporary file that gets its name only when complete, so a failed upload leaves nothing behind. Errors: 507 insufficient_storage when the sandbox disk quota is exhausted (nothing is written; the connection is closed if the body was not fully read). Errors: 400 bad_request (empty path or NUL byte; a directory where a file is expected or the reverse), 401, 403 forbidden (permission denied for `user`), 404 not_found (no such file or directory), 409 conflict (exists, or a non-empty directory), 503 (agent unreachable).
         */
        put: {
            parameters: {
                query: {
                    /** @description Path inside the sandbox; relative paths are relative to /home/user. Resolved as `user` (permissions and symlinks as that user sees them). */
                    path: string;
                };
                header?: {
                    "x-access-token"?: string;
                    /** @description Not needed on the per-sandbox host */
                    "x-platform-sandbox-id"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["FileEntry"];
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                507: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/files/list": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List a directory
         * @description Errors: 400 bad_request (empty path or NUL byte; a directory where a file is expected or the reverse), 401, 403 forbidden (permission denied for `user`), 404 not_found (no such file or directory), 409 conflict (exists, or a non-empty directory), 503 (agent unreachable).
         */
        get: {
            parameters: {
                query: {
                    /** @description Path inside the sandbox; relative paths are relative to /home/user. Resolved as `user` (permissions and symlinks as that user sees them). */
                    path: string;
                };
                header?: {
                    "x-access-token"?: string;
                    /** @description Not needed on the per-sandbox host */
                    "x-platform-sandbox-id"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Sorted by name; . and .. omitted */
                            entries: components["schemas"]["FileEntry"][];
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/files/mkdir": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create a directory (with parents by default)
         * @description Errors: 400 bad_request (empty path or NUL byte; a directory where a file is expected or the reverse), 401, 403 forbidden (permission denied for `user`), 404 not_found (no such file or directory), 409 conflict (exists, or a non-empty directory), 503 (agent unreachable).
         */
        post: {
            parameters: {
                query?: never;
                header?: {
                    "x-access-token"?: string;
                    /** @description Not needed on the per-sandbox host */
                    "x-platform-sandbox-id"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description Create missing parents and accept an existing directory (mkdir -p). Default true */
                        parents?: boolean;
                        /** @description Path inside the sandbox; relative paths are relative to /home/user. Resolved as `user` (permissions and symlinks as that user sees them). */
                        path: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["FileEntry"];
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                507: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/files/remove": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Remove a file, or a directory (recursive for a non-empty one)
         * @description Errors: 400 bad_request (empty path or NUL byte; a directory where a file is expected or the reverse), 401, 403 forbidden (permission denied for `user`), 404 not_found (no such file or directory), 409 conflict (exists, or a non-empty directory), 503 (agent unreachable).
         */
        post: {
            parameters: {
                query?: never;
                header?: {
                    "x-access-token"?: string;
                    /** @description Not needed on the per-sandbox host */
                    "x-platform-sandbox-id"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description Path inside the sandbox; relative paths are relative to /home/user. Resolved as `user` (permissions and symlinks as that user sees them). */
                        path: string;
                        /** @description Remove a directory with everything in it. Default false: a non-empty directory is 409 */
                        recursive?: boolean;
                    };
                };
            };
            responses: {
                /** @description Removed */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/files/rename": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Rename or move a file or directory (atomic, same filesystem)
         * @description Errors: 400 bad_request (empty path or NUL byte; a directory where a file is expected or the reverse), 401, 403 forbidden (permission denied for `user`), 404 not_found (no such file or directory), 409 conflict (exists, or a non-empty directory), 503 (agent unreachable).
         */
        post: {
            parameters: {
                query?: never;
                header?: {
                    "x-access-token"?: string;
                    /** @description Not needed on the per-sandbox host */
                    "x-platform-sandbox-id"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description Path inside the sandbox; relative paths are relative to /home/user. Resolved as `user` (permissions and symlinks as that user sees them). */
                        from: string;
                        /** @description Replace an existing target (default true); false: an existing target is 409 */
                        overwrite?: boolean;
                        /** @description Path inside the sandbox; relative paths are relative to /home/user. Resolved as `user` (permissions and symlinks as that user sees them). */
                        to: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["FileEntry"];
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/files/stat": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Information about a file or directory (symlinks not followed)
         * @description Errors: 400 bad_request (empty path or NUL byte; a directory where a file is expected or the reverse), 401, 403 forbidden (permission denied for `user`), 404 not_found (no such file or directory), 409 conflict (exists, or a non-empty directory), 503 (agent unreachable).
         */
        get: {
            parameters: {
                query: {
                    /** @description Path inside the sandbox; relative paths are relative to /home/user. Resolved as `user` (permissions and symlinks as that user sees them). */
                    path: string;
                };
                header?: {
                    "x-access-token"?: string;
                    /** @description Not needed on the per-sandbox host */
                    "x-platform-sandbox-id"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["FileEntry"];
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/files/watch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Watch a directory for changes (server-sent events)
         * @description text/event-stream: each `data: ` line is one JSON change event; when the watched directory itself is removed or moved a final event with finished: true ends the stream; a `: keepalive` comment every 15 s. Errors: 400 bad_request (empty path or NUL byte; a directory where a file is expected or the reverse), 401, 403 forbidden (permission denied for `user`), 404 not_found (no such file or directory), 409 conflict (exists, or a non-empty directory), 503 (agent unreachable).
         */
        get: {
            parameters: {
                query: {
                    /** @description Path inside the sandbox; relative paths are relative to /home/user. Resolved as `user` (permissions and symlinks as that user sees them). */
                    path: string;
                    /** @description Also watch subdirectories (default false) */
                    recursive?: "true" | "false";
                };
                header?: {
                    "x-access-token"?: string;
                    /** @description Not needed on the per-sandbox host */
                    "x-platform-sandbox-id"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description text/event-stream: each `data: ` line is one JSON change event; when the watched directory itself is removed or moved a final event with finished: true ends the stream; a `: keepalive` comment every 15 s */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/event-stream": {
                            error?: string;
                            /** @description Final event: the watched directory was removed or moved */
                            finished?: boolean;
                            is_dir?: boolean;
                            /** @description Absolute path of what changed */
                            path?: string;
                            /** Format: date-time */
                            timestamp: string;
                            /** @description rename_from/rename_to are the two halves of a rename (to or from outside the watched tree only one is seen) */
                            type?: "create" | "write" | "remove" | "rename_from" | "rename_to" | "chmod";
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Liveness: the process answers HTTP */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @enum {string} */
                            status: "ok";
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/info": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Discovery: where the data plane, sandbox hosts and previews are */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data_plane_url: string;
                            /** @description Runtime driver this host runs sandboxes on */
                            driver: string;
                            /** @description E2B-compatible API (set E2B_API_URL and E2B_SANDBOX_URL to it); absent when SANDPIT_E2B_PORT is 0 */
                            e2b_api_url?: string;
                            /** @description Template with {port} and {sandbox_id} */
                            preview_url: string;
                            region: string;
                            /** @description Regions this one knows (itself first); any of them serves any sandbox */
                            regions: {
                                api_url: string;
                                name: string;
                            }[];
                            /** @description Template with {sandbox_id} */
                            sandbox_url: string;
                            /** @description Port of the SSH gateway (`ssh -p <ssh_port> <sandbox_id>@host`); absent when SANDPIT_SSH_PORT is 0 */
                            ssh_port?: number;
                            version: string;
                            /** @description Pre-started sandboxes waiting for creates, over all templates (per template: GET /templates/{id} warm_pool_ready) */
                            warm_pool: {
                                ready: number;
                                target: number;
                            };
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/me": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The team, user and permissions of the calling API key */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            key_id: string;
                            permissions: string[];
                            team_id: string;
                            user_id: string;
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Prometheus metrics for operators: sandboxes by status, API and engine latency
         * @description No API key: it carries no team data, only counts and latencies. Restrict it at the network edge if needed.
         */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Prometheus text exposition format */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": string;
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/processes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List background processes (running, and recently exited)
         * @description Background processes run as `user`, outlive the request, client disconnects and pause/resume (the container driver keeps them in RAM), and are found again after a server restart. The last 1 MiB of output is kept on the host.
         */
        get: {
            parameters: {
                query?: never;
                header?: {
                    "x-access-token"?: string;
                    /** @description Not needed on the per-sandbox host */
                    "x-platform-sandbox-id"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            processes: components["schemas"]["ProcessInfo"][];
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        /**
         * Start a background process (returns at once)
         * @description Background processes run as `user`, outlive the request, client disconnects and pause/resume (the container driver keeps them in RAM), and are found again after a server restart. The last 1 MiB of output is kept on the host. A command that cannot be started (missing binary or working_dir) is 400.
         */
        post: {
            parameters: {
                query?: never;
                header?: {
                    "x-access-token"?: string;
                    /** @description Not needed on the per-sandbox host */
                    "x-platform-sandbox-id"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        args?: string[];
                        /** @description Run by /bin/sh -c unless args is given */
                        command: string;
                        env?: {
                            [key: string]: string;
                        };
                        /** @description Default /home/user */
                        working_dir?: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ProcessInfo"];
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/processes/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A background process */
        get: {
            parameters: {
                query?: never;
                header?: {
                    "x-access-token"?: string;
                    /** @description Not needed on the per-sandbox host */
                    "x-platform-sandbox-id"?: string;
                };
                path: {
                    /** @description Process id (or its pid) */
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ProcessInfo"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /** Kill (SIGKILL, whole process group) if running, and forget the process */
        delete: {
            parameters: {
                query?: never;
                header?: {
                    "x-access-token"?: string;
                    /** @description Not needed on the per-sandbox host */
                    "x-platform-sandbox-id"?: string;
                };
                path: {
                    /** @description Process id (or its pid) */
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Removed */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/processes/{id}/output": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Output so far (last 1 MiB, UTF-8 with U+FFFD for invalid bytes) */
        get: {
            parameters: {
                query?: never;
                header?: {
                    "x-access-token"?: string;
                    /** @description Not needed on the per-sandbox host */
                    "x-platform-sandbox-id"?: string;
                };
                path: {
                    /** @description Process id (or its pid) */
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            args: string[];
                            command: string;
                            /** @description Older output dropped: only the last 1 MiB (stdout and stderr together) is kept */
                            dropped_bytes: number;
                            exit_code?: number;
                            id: string;
                            pid: number;
                            running: boolean;
                            signal?: number;
                            /** Format: date-time */
                            started_at: string;
                            stderr: string;
                            stdout: string;
                            working_dir: string;
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/processes/{id}/signal": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Send a signal to the process group */
        post: {
            parameters: {
                query?: never;
                header?: {
                    "x-access-token"?: string;
                    /** @description Not needed on the per-sandbox host */
                    "x-platform-sandbox-id"?: string;
                };
                path: {
                    /** @description Process id (or its pid) */
                    id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        signal: string | number;
                    };
                };
            };
            responses: {
                /** @description Sent */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/processes/{id}/stdin": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Write to stdin
         * @description 204 once the sandbox took the input. 409 conflict when the process has exited, or is not reading and 4 MiB of earlier input are still pending (this input was dropped).
         */
        post: {
            parameters: {
                query?: never;
                header?: {
                    "x-access-token"?: string;
                    /** @description Not needed on the per-sandbox host */
                    "x-platform-sandbox-id"?: string;
                };
                path: {
                    /** @description Process id (or its pid) */
                    id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description Input for the process */
                        data: string;
                        /** @description Default utf8 */
                        encoding?: "utf8" | "base64";
                        /** @description Close stdin after this input */
                        eof?: boolean;
                    };
                };
            };
            responses: {
                /** @description Written */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/processes/{id}/stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Stream output (server-sent events)
         * @description text/event-stream of exec stream events: the kept output first (last 1 MiB), then live output; a final event with exit_code and finished: true when the process exits; a `: keepalive` comment every 15 s. Closing the stream does not stop the process.
         */
        get: {
            parameters: {
                query?: never;
                header?: {
                    "x-access-token"?: string;
                    /** @description Not needed on the per-sandbox host */
                    "x-platform-sandbox-id"?: string;
                };
                path: {
                    /** @description Process id (or its pid) */
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description text/event-stream of exec stream events: the kept output first (last 1 MiB), then live output; a final event with exit_code and finished: true when the process exits; a `: keepalive` comment every 15 s. Closing the stream does not stop the process. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/event-stream": {
                            error?: string;
                            exit_code?: number;
                            finished?: boolean;
                            stderr?: string;
                            stdout?: string;
                            /** Format: date-time */
                            timestamp: string;
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Readiness: the store answers and, on a node, an API replica accepted its last heartbeat (503 otherwise) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            checks: {
                                registered?: string;
                                store: string;
                            };
                            /** @enum {boolean} */
                            ready: true;
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sandboxes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the team's sandboxes, newest first; filter with status and metadata.{key}=value */
        get: {
            parameters: {
                query?: {
                    cursor?: string;
                    /** @description Page size, 1 to 1000 (default 100) */
                    limit?: string;
                    /** @description One status or a comma-separated list */
                    status?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            next_cursor?: string;
                            sandboxes: components["schemas"]["Sandbox"][];
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        /** Create a sandbox; it is ready to use when this returns */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        auto_delete_seconds?: number;
                        /** @description false: an auto-pause keeps only the disk (processes end; resume boots afresh, as POST /pause with keep_memory false). Default true. */
                        auto_pause_keep_memory?: boolean;
                        auto_pause_seconds?: number;
                        env?: {
                            [key: string]: string;
                        };
                        /** @description Snapshot UUID (status ready): the new sandbox is a fork whose processes continue from the snapshot, with its disk, environment, template and resources. Several forks of one snapshot run independently. Not combinable with from_template, env or secrets. 503 on hosts whose driver cannot snapshot. */
                        from_snapshot?: string;
                        /** @description Template UUID or name; default platform/base */
                        from_template?: string;
                        /** @description At most 64 keys, keys at most 256 bytes, values at most 2048 bytes, 16384 bytes serialized; keys starting with platform. or _platform (any case) are reserved */
                        metadata?: {
                            [key: string]: string;
                        };
                        name?: string;
                        /** @description 10/8, 172.16/12, 192.168/16, 127/8 and 169.254/16 are always blocked */
                        network?: {
                            /** @description CIDRs and domain names (wildcard *.<domain>); when present everything else is denied */
                            allow_out?: string[];
                            /** @description CIDRs only */
                            deny_out?: string[];
                        };
                        preview_access?: "public" | "private";
                        /** @description Region the sandbox lives in (GET /info lists them); default: the region of the API that answers */
                        region?: string;
                        /** @description env-var name -> secret name; the sandbox sees only a proxy token */
                        secrets?: {
                            [key: string]: string;
                        };
                        /** @description Volumes to mount (docs/volumes.md). A fork from_snapshot mounts the volumes its snapshot recorded and takes none here. */
                        volumes?: {
                            /** @description Absolute path inside the sandbox, normalized (no `..`, `.` or `//`) */
                            path: string;
                            /** @description Writes inside fail with EROFS */
                            read_only?: boolean;
                            /** @description Volume UUID or name */
                            volume: string;
                        }[];
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["SandboxWithToken"];
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                507: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sandboxes/{sandbox_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a sandbox */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description PublicSandboxId: a UUID or sb-<region>-<uuid> */
                    sandbox_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Sandbox"];
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /** Delete a sandbox and release everything it held */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description PublicSandboxId: a UUID or sb-<region>-<uuid> */
                    sandbox_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        /** Update name, metadata, timers, network rules or preview access */
        patch: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description PublicSandboxId: a UUID or sb-<region>-<uuid> */
                    sandbox_id: string;
                };
                cookie?: never;
            };
            /** @description metadata replaces the whole object; null disables a timer or restores default network rules */
            requestBody: {
                content: {
                    "application/json": {
                        auto_delete_seconds?: number | null;
                        /** @description false: an auto-pause keeps only the disk (processes end; resume boots afresh, as POST /pause with keep_memory false). Default true. */
                        auto_pause_keep_memory?: boolean;
                        auto_pause_seconds?: number | null;
                        /** @description At most 64 keys, keys at most 256 bytes, values at most 2048 bytes, 16384 bytes serialized; keys starting with platform. or _platform (any case) are reserved */
                        metadata?: {
                            [key: string]: string;
                        };
                        name?: string;
                        network?: {
                            /** @description CIDRs and domain names (wildcard *.<domain>); when present everything else is denied */
                            allow_out?: string[];
                            /** @description CIDRs only */
                            deny_out?: string[];
                        } | null;
                        preview_access?: "public" | "private";
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Sandbox"];
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        trace?: never;
    };
    "/sandboxes/{sandbox_id}/activate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Resume when paused, no-op when active; returns the access token */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description PublicSandboxId: a UUID or sb-<region>-<uuid> */
                    sandbox_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description false: drop the memory the pause kept and boot the sandbox afresh from its disk, environment and template (as after a pause with keep_memory false). Default true: every process continues. */
                        keep_memory?: boolean;
                    } | null;
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["SandboxWithToken"];
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sandboxes/{sandbox_id}/changes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Files added, modified and deleted in the sandbox's writable layer against its template or the snapshot it was forked from, by path
         * @description With `diff=<path>`: a unified diff (text/plain) of that one changed text file instead; 400 for a binary file, a directory or one over 4 MiB, 404 when the path is not changed. 409: the sandbox's layer is not on this host (failed). 503: the engine does not show layers.
         */
        get: {
            parameters: {
                query?: {
                    cursor?: string;
                    /** @description Instead of the list: a unified diff of this one text file against the base (text/plain) */
                    diff?: string;
                    /** @description Page size, 1 to 1000 (default 100) */
                    limit?: string;
                    /** @description Only this path and what is beneath it (absolute) */
                    path?: string;
                };
                header?: never;
                path: {
                    /** @description PublicSandboxId: a UUID or sb-<region>-<uuid> */
                    sandbox_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            base: {
                                /** @description The template id, or the snapshot the sandbox was forked from */
                                id: string;
                                kind: "template" | "snapshot";
                            };
                            changes: components["schemas"]["Change"][];
                            next_cursor?: string;
                        };
                        "text/plain": string;
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sandboxes/{sandbox_id}/changes/apply": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Copy another sandbox's changes into this one, each file whole
         * @description Both sandboxes must have the same base (template and version, or snapshot): 409 conflict otherwise. Paths this sandbox changed too since the base are reported in `conflicts` and left alone. A paused sandbox is resumed. 404: either sandbox is not in the team. 507: this sandbox's disk filled (files applied before stay).
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description PublicSandboxId: a UUID or sb-<region>-<uuid> */
                    sandbox_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description The sandbox whose changes are copied (same base as this one) */
                        from: string;
                        /** @description Only these paths and what is beneath them; default all */
                        paths?: string[];
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            applied: {
                                kind: "added" | "modified" | "deleted";
                                path: string;
                            }[];
                            /** @description Not applied: this sandbox changed the same path (or one above or below it) differently since the common base */
                            conflicts: {
                                /** @description The change this sandbox made since the common base that collides */
                                here: {
                                    kind: "added" | "modified" | "deleted";
                                    path: string;
                                };
                                kind: "added" | "modified" | "deleted";
                                path: string;
                            }[];
                            /** @description Not applied: symlinks and special files, which the data plane does not write */
                            skipped: {
                                path: string;
                                reason: string;
                            }[];
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                507: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sandboxes/{sandbox_id}/code/contexts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List code contexts (the default ones too) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description PublicSandboxId: a UUID or sb-<region>-<uuid> */
                    sandbox_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            cwd: string;
                            id: string;
                            /** @description Default python */
                            language: "python" | "javascript" | "typescript" | "r" | "bash";
                        }[];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                502: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        /** Create a code context: a kernel of its own, whose state runs share */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description PublicSandboxId: a UUID or sb-<region>-<uuid> */
                    sandbox_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description Default /home/user */
                        cwd?: string;
                        /** @description Default python */
                        language?: "python" | "javascript" | "typescript" | "r" | "bash";
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            cwd: string;
                            id: string;
                            /** @description Default python */
                            language: "python" | "javascript" | "typescript" | "r" | "bash";
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                502: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sandboxes/{sandbox_id}/code/contexts/{context_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Remove a code context and stop its kernel */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    context_id: string;
                    sandbox_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description No content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                502: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sandboxes/{sandbox_id}/code/contexts/{context_id}/restart": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Restart a code context: its state is cleared */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    context_id: string;
                    sandbox_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description No content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                502: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sandboxes/{sandbox_id}/code/run": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Run code and stream its output and results (auto-resumes a paused sandbox)
         * @description application/x-ndjson (default): one JSON event a line; text/event-stream when the Accept header asks for it. Events: stdout, stderr, result (a value or a display such as a PNG chart), error (name, value, traceback), execution_count; the last is end with everything the run produced.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description PublicSandboxId: a UUID or sb-<region>-<uuid> */
                    sandbox_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        code: string;
                        /** @description A context from POST /code/contexts; not combinable with language */
                        context_id?: string;
                        /** @description Set for this run only */
                        env?: {
                            [key: string]: string;
                        };
                        /** @description Default python */
                        language?: "python" | "javascript" | "typescript" | "r" | "bash";
                    };
                };
            };
            responses: {
                /** @description application/x-ndjson (default): one JSON event a line; text/event-stream when the Accept header asks for it. Events: stdout, stderr, result (a value or a display such as a PNG chart), error (name, value, traceback), execution_count; the last is end with everything the run produced. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/x-ndjson": {
                            text: string;
                            /** @enum {string} */
                            type: "stdout";
                        } | {
                            text: string;
                            /** @enum {string} */
                            type: "stderr";
                        } | ({
                            /** @enum {string} */
                            type: "result";
                        } & ({
                            html?: string;
                            /** @description The value of the last expression (else a display call such as a chart) */
                            is_main_result: boolean;
                            javascript?: string;
                            /** @description base64 */
                            jpeg?: string;
                            json?: unknown;
                            latex?: string;
                            markdown?: string;
                            /** @description base64 */
                            pdf?: string;
                            /** @description base64 */
                            png?: string;
                            svg?: string;
                            text?: string;
                        } & {
                            [key: string]: unknown;
                        })) | {
                            name: string;
                            traceback: string;
                            /** @enum {string} */
                            type: "error";
                            value: string;
                        } | {
                            execution_count: number;
                            /** @enum {string} */
                            type: "execution_count";
                        } | {
                            error?: {
                                name: string;
                                traceback: string;
                                value: string;
                            };
                            execution_count?: number;
                            results: ({
                                html?: string;
                                /** @description The value of the last expression (else a display call such as a chart) */
                                is_main_result: boolean;
                                javascript?: string;
                                /** @description base64 */
                                jpeg?: string;
                                json?: unknown;
                                latex?: string;
                                markdown?: string;
                                /** @description base64 */
                                pdf?: string;
                                /** @description base64 */
                                png?: string;
                                svg?: string;
                                text?: string;
                            } & {
                                [key: string]: unknown;
                            })[];
                            stderr: string[];
                            stdout: string[];
                            /** @enum {string} */
                            type: "end";
                        };
                        "text/event-stream": {
                            text: string;
                            /** @enum {string} */
                            type: "stdout";
                        } | {
                            text: string;
                            /** @enum {string} */
                            type: "stderr";
                        } | ({
                            /** @enum {string} */
                            type: "result";
                        } & ({
                            html?: string;
                            /** @description The value of the last expression (else a display call such as a chart) */
                            is_main_result: boolean;
                            javascript?: string;
                            /** @description base64 */
                            jpeg?: string;
                            json?: unknown;
                            latex?: string;
                            markdown?: string;
                            /** @description base64 */
                            pdf?: string;
                            /** @description base64 */
                            png?: string;
                            svg?: string;
                            text?: string;
                        } & {
                            [key: string]: unknown;
                        })) | {
                            name: string;
                            traceback: string;
                            /** @enum {string} */
                            type: "error";
                            value: string;
                        } | {
                            execution_count: number;
                            /** @enum {string} */
                            type: "execution_count";
                        } | {
                            error?: {
                                name: string;
                                traceback: string;
                                value: string;
                            };
                            execution_count?: number;
                            results: ({
                                html?: string;
                                /** @description The value of the last expression (else a display call such as a chart) */
                                is_main_result: boolean;
                                javascript?: string;
                                /** @description base64 */
                                jpeg?: string;
                                json?: unknown;
                                latex?: string;
                                markdown?: string;
                                /** @description base64 */
                                pdf?: string;
                                /** @description base64 */
                                png?: string;
                                svg?: string;
                                text?: string;
                            } & {
                                [key: string]: unknown;
                            })[];
                            stderr: string[];
                            stdout: string[];
                            /** @enum {string} */
                            type: "end";
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                502: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sandboxes/{sandbox_id}/desktop/actions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Mouse, keyboard or open a file or URL on the desktop; answers once the input was sent */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description PublicSandboxId: a UUID or sb-<region>-<uuid> */
                    sandbox_id: string;
                };
                cookie?: never;
            };
            /** @description An input action on the sandbox desktop */
            requestBody: {
                content: {
                    "application/json": {
                        /** @enum {string} */
                        type: "move";
                        x: number;
                        y: number;
                    } | {
                        button?: "left" | "middle" | "right";
                        /** @description 2 is a double click */
                        count?: number;
                        /** @enum {string} */
                        type: "click";
                        x?: number;
                        y?: number;
                    } | {
                        button?: "left" | "middle" | "right";
                        /** @enum {string} */
                        type: "press";
                    } | {
                        button?: "left" | "middle" | "right";
                        /** @enum {string} */
                        type: "release";
                    } | {
                        from: [
                            number,
                            number
                        ];
                        to: [
                            number,
                            number
                        ];
                        /** @enum {string} */
                        type: "drag";
                    } | {
                        /** @description Wheel steps, default 1 */
                        amount?: number;
                        direction: "up" | "down" | "left" | "right";
                        /** @enum {string} */
                        type: "scroll";
                        x?: number;
                        y?: number;
                    } | {
                        text: string;
                        /** @enum {string} */
                        type: "type";
                    } | {
                        /** @description A key or chord in X keysym names: Return, ctrl+c, ctrl+shift+t */
                        keys: string;
                        /** @enum {string} */
                        type: "key";
                    } | {
                        /** @description A path in the sandbox or a URL, opened with its default application */
                        target: string;
                        /** @enum {string} */
                        type: "open";
                    };
                };
            };
            responses: {
                /** @description Default Response */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sandboxes/{sandbox_id}/desktop/cursor": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Where the pointer is */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description PublicSandboxId: a UUID or sb-<region>-<uuid> */
                    sandbox_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            x: number;
                            y: number;
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sandboxes/{sandbox_id}/desktop/live-view": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** A noVNC link to watch (view_only) or drive the desktop, on a private preview port with a short-lived view token */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description PublicSandboxId: a UUID or sb-<region>-<uuid> */
                    sandbox_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description How long the link opens new connections; default 900 */
                        ttl_s?: number;
                        /** @description Default false. A view-only link opens an endpoint that refuses keyboard and mouse input */
                        view_only?: boolean;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** Format: date-time */
                            expires_at: string;
                            /** @description The private preview port serving it */
                            port: number;
                            /** @description noVNC in a browser, with the view token in it: treat it as a secret */
                            url: string;
                            view_only: boolean;
                            /** @description Opens this port only (X-Preview-Token or ?preview_token=) until expires_at */
                            view_token: string;
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sandboxes/{sandbox_id}/desktop/screen": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The screen size in pixels */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description PublicSandboxId: a UUID or sb-<region>-<uuid> */
                    sandbox_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            height: number;
                            width: number;
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sandboxes/{sandbox_id}/desktop/screenshot": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A PNG of the desktop, or of a region (auto-resumes a paused sandbox) */
        get: {
            parameters: {
                query?: {
                    height?: string;
                    width?: string;
                    x?: string;
                    y?: string;
                };
                header?: never;
                path: {
                    /** @description PublicSandboxId: a UUID or sb-<region>-<uuid> */
                    sandbox_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description image/png */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "image/png": string;
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sandboxes/{sandbox_id}/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Lifecycle events with reasons (created, paused by auto-pause or request, resumed, snapshot, failed and why), oldest first */
        get: {
            parameters: {
                query?: {
                    /** @description Only events with a larger seq (for polling) */
                    after?: string;
                    /** @description 1 to 1000, default 200 */
                    limit?: string;
                };
                header?: never;
                path: {
                    /** @description PublicSandboxId: a UUID or sb-<region>-<uuid> */
                    sandbox_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            events: {
                                /** Format: date-time */
                                at: string;
                                data: {
                                    [key: string]: unknown;
                                } | null;
                                /** @description Why it happened, in words */
                                reason: string;
                                /** @description Increasing across the installation */
                                seq: number;
                                /** @description created, updated, paused, auto_paused, resumed, snapshot, failed, reconciled_active, reconciled_paused, deleted, auto_deleted */
                                type: string;
                            }[];
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sandboxes/{sandbox_id}/exec": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Run a command to completion (auto-resumes a paused sandbox) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description PublicSandboxId: a UUID or sb-<region>-<uuid> */
                    sandbox_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        args?: string[];
                        /** @description Run by /bin/sh -c unless args is given */
                        command: string;
                        env?: {
                            [key: string]: string;
                        };
                        /** @description Default 30. At the limit the whole process group is killed and exit_code is 124 */
                        timeout_s?: number;
                        /** @description Default /home/user */
                        working_dir?: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            exit_code: number;
                            stderr: string;
                            stdout: string;
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sandboxes/{sandbox_id}/exec/stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Run a command and stream its output as server-sent events
         * @description text/event-stream: each `data: ` line is one JSON event; the final event has finished: true; a `: keepalive` comment every 15 s
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description PublicSandboxId: a UUID or sb-<region>-<uuid> */
                    sandbox_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        args?: string[];
                        /** @description Run by /bin/sh -c unless args is given */
                        command: string;
                        env?: {
                            [key: string]: string;
                        };
                        /** @description Default 30. At the limit the whole process group is killed and exit_code is 124 */
                        timeout_s?: number;
                        /** @description Default /home/user */
                        working_dir?: string;
                    };
                };
            };
            responses: {
                /** @description text/event-stream: each `data: ` line is one JSON event; the final event has finished: true; a `: keepalive` comment every 15 s */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/event-stream": {
                            error?: string;
                            exit_code?: number;
                            finished?: boolean;
                            stderr?: string;
                            stdout?: string;
                            /** Format: date-time */
                            timestamp: string;
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sandboxes/{sandbox_id}/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** CPU, memory, disk and network use over time, sampled from the engine cgroups and the sandbox veth */
        get: {
            parameters: {
                query?: {
                    /** @description Only points at or after this time (for polling) */
                    since?: string;
                };
                header?: never;
                path: {
                    /** @description PublicSandboxId: a UUID or sb-<region>-<uuid> */
                    sandbox_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Time between samples; a paused sandbox is not sampled, so the series has gaps */
                            interval_ms: number;
                            points: {
                                /** Format: date-time */
                                at: string;
                                cpu_percent: number | null;
                                /** @description Bytes written to the sandbox disk layer */
                                disk_bytes: number;
                                /** @description Memory charged to the sandbox cgroup */
                                memory_bytes: number;
                                net_rx_bytes: number | null;
                                net_rx_rate: number | null;
                                net_tx_bytes: number | null;
                                net_tx_rate: number | null;
                            }[];
                            resources: {
                                disk_mib: number;
                                memory_mib: number;
                                vcpu_count: number;
                            };
                            sandbox_id: string;
                            /** @description How far back points are kept (in memory: a server restart starts afresh) */
                            window_ms: number;
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sandboxes/{sandbox_id}/migrate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Move a sandbox to another node (several hosts; needs sandboxes:move)
         * @description A running gVisor sandbox moves with every process and its memory: it is migrating while it moves (its connections are cut as by a pause) and active on the new node when this returns, with the same id, access token, files, network rules, secrets and preview ports. A paused one moves paused (one paused keeping only its disk moves its disk, and boots there on resume). 409: it cannot move (an engine whose memory is not on disk, volumes it mounts, a transition under way, a single-host installation); nothing changed. 503: the target is lost, full or takes no sandboxes (nothing changed), or the copy failed (it runs on where it was).
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description PublicSandboxId: a UUID or sb-<region>-<uuid> */
                    sandbox_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description The node to move it to; default: the one placement picks in its region */
                        node?: string;
                    } | null;
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Sandbox"];
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sandboxes/{sandbox_id}/pause": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Pause a sandbox (409 when already paused)
         * @description The body is optional. By default memory and disk are kept and resume continues every process. 409 also when the engine cannot capture the sandbox as it stands (gVisor: TCP connections on its network, with Retry-After when a retry is known to work then); a pause with keep_memory false is never refused so. 500: the save took the sandbox down; it is recorded failed. 503: keep_memory false on an engine that cannot boot a sandbox again from its disk.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description PublicSandboxId: a UUID or sb-<region>-<uuid> */
                    sandbox_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description false: keep only the disk. Every process ends and the memory is freed; resume boots the sandbox afresh from its disk, environment and template. Never refused for open connections. Default true. */
                        keep_memory?: boolean;
                    } | null;
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Sandbox"];
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                507: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sandboxes/{sandbox_id}/preview-ports": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List published preview ports */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description PublicSandboxId: a UUID or sb-<region>-<uuid> */
                    sandbox_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            preview_ports: {
                                access: "public" | "private";
                                /** Format: date-time */
                                created_at: string;
                                port: number;
                                /** @description Private ports only: send as X-Preview-Token or ?preview_token= (X-Access-Token also works) */
                                preview_token?: string;
                                /** @description Where the port is reachable; the server inside must listen on 0.0.0.0 */
                                url: string;
                            }[];
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        /** Publish a port of the sandbox at its preview URL (re-publishing changes its access) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description PublicSandboxId: a UUID or sb-<region>-<uuid> */
                    sandbox_id: string;
                };
                cookie?: never;
            };
            /** @description access defaults to the sandbox preview_access (legacy_public publishes as public) */
            requestBody: {
                content: {
                    "application/json": {
                        access?: "public" | "private";
                        port: number;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            access: "public" | "private";
                            /** Format: date-time */
                            created_at: string;
                            port: number;
                            /** @description Private ports only: send as X-Preview-Token or ?preview_token= (X-Access-Token also works) */
                            preview_token?: string;
                            /** @description Where the port is reachable; the server inside must listen on 0.0.0.0 */
                            url: string;
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sandboxes/{sandbox_id}/preview-ports/{port}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Unpublish a preview port */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description Port number, 1 to 65535 */
                    port: string;
                    /** @description PublicSandboxId: a UUID or sb-<region>-<uuid> */
                    sandbox_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sandboxes/{sandbox_id}/resume": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Resume a paused sandbox (409 when active); returns the access token */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description PublicSandboxId: a UUID or sb-<region>-<uuid> */
                    sandbox_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description false: drop the memory the pause kept and boot the sandbox afresh from its disk, environment and template (as after a pause with keep_memory false). Default true: every process continues. */
                        keep_memory?: boolean;
                    } | null;
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["SandboxWithToken"];
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sandboxes/{sandbox_id}/snapshot": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Capture memory and disk of an active or paused sandbox; a running sandbox is paused only during the capture
         * @description 201: ready (returns once ready). 200: a retry with the same idempotency_key, whatever became of that snapshot. 202 + Retry-After: the capture outlasted the server's deadline and settles in the background; poll GET /snapshots/{id}. 409: the sandbox is not active or paused, or cannot be captured as it stands (e.g. open TCP connections under gVisor; with Retry-After when the engine knows when a retry works). 500: the save took the running sandbox down; it is recorded failed. 410: the snapshot made with that key was deleted. 503: the host's driver cannot snapshot (container), or the host could not take it; retry.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description PublicSandboxId: a UUID or sb-<region>-<uuid> */
                    sandbox_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description Unique per sandbox: a retry with the same key returns what the first request made (200), or 410 once it was deleted */
                        idempotency_key?: string;
                        /**
                         * @description Default mem+fs (memory and disk); a disk-only kind is not offered yet
                         * @enum {string}
                         */
                        kind?: "mem+fs";
                        name?: string;
                    };
                };
            };
            responses: {
                /** @description Kept until deleted; outlives the sandbox it came from. Start a sandbox from it with POST /sandboxes {from_snapshot}. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Snapshot"];
                    };
                };
                /** @description Kept until deleted; outlives the sandbox it came from. Start a sandbox from it with POST /sandboxes {from_snapshot}. */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Snapshot"];
                    };
                };
                /** @description Kept until deleted; outlives the sandbox it came from. Start a sandbox from it with POST /sandboxes {from_snapshot}. */
                202: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Snapshot"];
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                507: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/secrets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List live secrets: names and metadata, never values */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            secrets: {
                                allowed_hosts: string[];
                                /** Format: date-time */
                                created_at: string;
                                name: string;
                            }[];
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        /** Store a secret; sandboxes bound to it see only a proxy token, swapped for the value at egress */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description Hosts the value may be sent to (*.<domain> allowed); absent: any host the sandbox may reach */
                        allowed_hosts?: string[];
                        name: string;
                        /** @description Stored encrypted; never returned */
                        value: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            allowed_hosts: string[];
                            /** Format: date-time */
                            created_at: string;
                            name: string;
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/secrets/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Revoke a secret: bound sandboxes keep a useless token, the proxy refuses it, the name can be reused */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    name: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/session": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Whether the console session cookie is signed in, and as what (200 either way, so a signed-out page load is not an error) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            session?: {
                                key_id: string;
                                permissions: string[];
                                team_id: string;
                                user_id: string;
                            };
                            signed_in: boolean;
                        };
                    };
                };
            };
        };
        put?: never;
        /**
         * Exchange an API key for a console session cookie (HttpOnly, SameSite=Strict)
         * @description Requests with the cookie and no X-API-Key act with the key's permissions; mutations must also send the x-sandpit-console header.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        api_key: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** Format: date-time */
                            expires_at: string;
                            key_id: string;
                            permissions: string[];
                            team_id: string;
                            user_id: string;
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        /** Sign out: ends the console session and clears its cookie */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/snapshots": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the team's snapshots, newest first; filter with sandbox_id */
        get: {
            parameters: {
                query?: {
                    cursor?: string;
                    /** @description Page size, 1 to 1000 (default 100) */
                    limit?: string;
                    /** @description Only snapshots of this sandbox (UUID or sb-<region>-<uuid>) */
                    sandbox_id?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            next_cursor?: string;
                            snapshots: components["schemas"]["Snapshot"][];
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/snapshots/{snapshot_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a snapshot */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description Snapshot UUID */
                    snapshot_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Kept until deleted; outlives the sandbox it came from. Start a sandbox from it with POST /sandboxes {from_snapshot}. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Snapshot"];
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /** Delete a snapshot and its files (409 while it is being created) */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description Snapshot UUID */
                    snapshot_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        /** Rename a snapshot */
        patch: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description Snapshot UUID */
                    snapshot_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description null removes the label */
                        name: string | null;
                    };
                };
            };
            responses: {
                /** @description Kept until deleted; outlives the sandbox it came from. Start a sandbox from it with POST /sandboxes {from_snapshot}. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Snapshot"];
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        trace?: never;
    };
    "/ssh-keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The team's SSH public keys */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            ssh_keys: {
                                /** @description e.g. ssh-ed25519 */
                                algorithm: string;
                                /** Format: date-time */
                                created_at: string;
                                /** @description OpenSSH's SHA256 fingerprint, as `ssh-keygen -l` prints it */
                                fingerprint: string;
                                id: string;
                                name: string;
                            }[];
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        /** Register an SSH public key for the team: it logs in to any of the team's sandboxes (user name: the sandbox id) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description Default: the key line's comment */
                        name?: string;
                        /** @description One OpenSSH public key line, e.g. the contents of ~/.ssh/id_ed25519.pub */
                        public_key: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description e.g. ssh-ed25519 */
                            algorithm: string;
                            /** Format: date-time */
                            created_at: string;
                            /** @description OpenSSH's SHA256 fingerprint, as `ssh-keygen -l` prints it */
                            fingerprint: string;
                            id: string;
                            name: string;
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/ssh-keys/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Remove an SSH public key: it logs in nowhere from now on */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/teams/{team_id}/billing/periods": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The team's persisted billing periods, newest first
         * @description Needs billing:read. Any team id other than the caller's answers 403 `forbidden`, whether or not that team exists. Usage is metered from sandbox lifecycle events: vCPU and memory while a sandbox is active, disk size (sampled) from creation to deletion. Periods are calendar months in UTC: `open` while current, `finalized` (totals frozen) once rolled over. Every period since the team's billing account was opened; no paging.
         */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description Your team id (GET /me); any other id answers 403 */
                    team_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Newest first */
                            periods: components["schemas"]["BillingPeriod"][];
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/teams/{team_id}/billing/usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Usage of one billing period (default: the current one)
         * @description Needs billing:read. Any team id other than the caller's answers 403 `forbidden`, whether or not that team exists. Usage is metered from sandbox lifecycle events: vCPU and memory while a sandbox is active, disk size (sampled) from creation to deletion. Periods are calendar months in UTC: `open` while current, `finalized` (totals frozen) once rolled over. Select a period with ?period_id=<period_id from /billing/periods>; 404 when the team has no such period.
         */
        get: {
            parameters: {
                query?: {
                    /** @description A period_id from GET /teams/{team_id}/billing/periods; default: the current (open) period */
                    period_id?: string;
                };
                header?: never;
                path: {
                    /** @description Your team id (GET /me); any other id answers 403 */
                    team_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["TeamBillingUsage"];
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/teams/{team_id}/billing/usage/sandboxes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Usage and charge of each sandbox in one billing period (default: the current one)
         * @description Needs billing:read. Any team id other than the caller's answers 403 `forbidden`, whether or not that team exists. Usage is metered from sandbox lifecycle events: vCPU and memory while a sandbox is active, disk size (sampled) from creation to deletion. Periods are calendar months in UTC: `open` while current, `finalized` (totals frozen) once rolled over. Charges are at the team's current rates, before credits. Same ?period_id as the usage endpoint.
         */
        get: {
            parameters: {
                query?: {
                    /** @description A period_id from GET /teams/{team_id}/billing/periods; default: the current (open) period */
                    period_id?: string;
                };
                header?: never;
                path: {
                    /** @description Your team id (GET /me); any other id answers 403 */
                    team_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** Format: date-time */
                            period_end: string;
                            period_id: string;
                            /** Format: date-time */
                            period_start: string;
                            /** @description Every sandbox with usage in the period, highest charge first */
                            sandboxes: {
                                /** @description USD. At the team's current rates, before credits */
                                charge_usd: number;
                                deleted: boolean;
                                memory_mib_seconds: number;
                                name?: string;
                                /** @description Region-tagged sandbox id; the sandbox may since have been deleted */
                                sandbox_id: string;
                                /** @description Its disk and the snapshots taken from it */
                                storage_mib_seconds: number;
                                vcpu_seconds: number;
                            }[];
                            /** @description open: the current period, still accruing; finalized: ended, totals frozen */
                            status: string;
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/teams/{team_id}/management": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Members, role assignments and what the caller may change (needs members:read)
         * @description The caller is the API key's user (X-Actor-User-Id is ignored). Any team id other than the caller's answers 403 `forbidden`, whether or not that team exists.
         */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description Your team id (GET /me); any other id answers 403 */
                    team_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Every role assignment, revoked ones included, oldest first */
                            assignments: components["schemas"]["RoleAssignment"][];
                            /** @description What the calling API key may do here */
                            capabilities: {
                                can_assign_roles: boolean;
                                can_deactivate_members: boolean;
                                can_invite_members: boolean;
                                can_revoke_roles: boolean;
                                can_view_role_assignments: boolean;
                            };
                            /** @description Every member, deactivated ones included */
                            members: components["schemas"]["TeamMember"][];
                            mutation_options: {
                                /** @description Roles the caller may grant or revoke: owners all, admins all but owner */
                                assignable_roles: string[];
                                /** @description Statuses a member can have */
                                member_statuses: string[];
                            };
                            /** Format: uuid */
                            team_id: string;
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/teams/{team_id}/members": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Add a member with a role and issue their first API key (needs members:manage)
         * @description The caller is the API key's user (X-Actor-User-Id is ignored). Any team id other than the caller's answers 403 `forbidden`, whether or not that team exists. The key carries the permissions of the role; 409 when an active member has the e-mail.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description Your team id (GET /me); any other id answers 403 */
                    team_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        email: string;
                        full_name: string;
                        /** @description owner, admin, member or billing_viewer */
                        role: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            api_key: {
                                id: string;
                                /** @description Shown once; stored only hashed */
                                key: string;
                                /** @description The permissions of the member's role */
                                permissions: string[];
                            };
                            member: components["schemas"]["TeamMember"];
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/teams/{team_id}/members/{user_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Deactivate a member: their API keys stop working at once; the member stays listed as deactivated
         * @description The caller is the API key's user (X-Actor-User-Id is ignored). Any team id other than the caller's answers 403 `forbidden`, whether or not that team exists. Needs members:manage; only an owner deactivates an owner. 404: no such member in the team. 409: already deactivated, or the team's last active owner.
         */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    team_id: string;
                    user_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description No content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/teams/{team_id}/members/{user_id}/roles": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Grant a role to an active member
         * @description The caller is the API key's user (X-Actor-User-Id is ignored). Any team id other than the caller's answers 403 `forbidden`, whether or not that team exists. Needs members:manage; the role must be in the caller's assignable_roles. 409: the member holds it already or is deactivated.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    team_id: string;
                    user_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description owner, admin, member or billing_viewer */
                        role_name: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** Format: uuid */
                            assignment_id: string;
                            /** Format: date-time */
                            created_at: string;
                            email: string;
                            /** Format: date-time */
                            granted_at: string;
                            /**
                             * Format: uuid
                             * @description User whose API key granted it (a team's first owner granted itself)
                             */
                            granted_by: string;
                            /** @description Null while the role is held */
                            revoked_at: string | null;
                            /** @description owner, admin, member or billing_viewer */
                            role_name: string;
                            /** @description Always team */
                            scope_type: string;
                            /** Format: uuid */
                            team_id: string;
                            /** Format: date-time */
                            updated_at: string;
                            /** Format: uuid */
                            user_id: string;
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/teams/{team_id}/members/{user_id}/roles/{role_name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Revoke a role; the assignment stays listed with revoked_at
         * @description The caller is the API key's user (X-Actor-User-Id is ignored). Any team id other than the caller's answers 403 `forbidden`, whether or not that team exists. Needs members:manage; the role must be in the caller's assignable_roles. 404: the member does not hold it. 409: the team's last active owner.
         */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    role_name: string;
                    team_id: string;
                    user_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description No content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/templates": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Curated platform/* templates and the team's own */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            templates: components["schemas"]["Template"][];
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        /**
         * Build a template (or rebuild one of the same name) from a base template, a container image or a Dockerfile, and steps
         * @description Answers 202 at once with the template (status building, or the previous status on a rebuild) and build_id; the build runs in sandboxes of its own. Follow it with GET /templates/{id}/builds/{build_id}/logs (SSE) or poll GET /templates/{id}. It ends ready, or failed with error `<code>: <detail>`. Inline files (copy steps) are at most 4 MiB each, and the request at most 8 MiB. 429 too_many_builds / too_many_templates at the team's limits.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description Template to build on (UUID or name): platform/base (default), a curated platform/* template, or a ready template of the team */
                        base?: string;
                        /** @description Dockerfile text: one FROM (an image, or a template name) then RUN, COPY of inline heredocs, ENV, WORKDIR, USER, ARG, CMD, ENTRYPOINT; anything else is a bad_request naming the line. RUN and COPY run as root until a USER names another account (which runs as `user`); CMD/ENTRYPOINT become start_cmd unless start_cmd is given. body steps run after the Dockerfile's. Exclusive with base and from_image. */
                        dockerfile?: string;
                        /** @description Build on a container image instead (`[registry/]repository[:tag][@sha256:...]`, Docker Hub when no registry is named; linux/amd64 out of a multi-arch index). Its ENV and WORKDIR carry over; a `user` account is added unless the image has one (the image's non-root USER account becomes `user`). Steps, start_cmd and ready_cmd need /bin/sh in the image; exec with args does not. Exclusive with base and dockerfile. */
                        from_image?: string;
                        /** @description Unique per team. Posting an existing name rebuilds that template: the previous version serves new sandboxes until the new one is ready. The platform/ prefix is reserved. */
                        name: string;
                        /** @description Run every step even where its layer is cached (as docker build --no-cache) */
                        no_cache?: boolean;
                        /** @description Polled until it exits 0 before a sandbox counts as ready; create returns only then (ready_cmd_failed when it never passes) */
                        ready_cmd?: string;
                        /** @description Bound on the ready wait, default 60 */
                        ready_timeout_s?: number;
                        /** @description Credentials for from_image (or a Dockerfile FROM image) at a private registry */
                        registry_auth?: {
                            /** @description Name of a team secret holding the password or token */
                            password_secret: string;
                            username: string;
                        };
                        /** @description Kept running (as user, in the background) in every sandbox of the template; exiting before the sandbox is ready fails it (start_cmd_failed), unless it exits 0 while a ready_cmd decides */
                        start_cmd?: string;
                        /** @description Run in order; every run/copy step's filesystem result is cached by content hash, so a rebuild re-runs only the changed step and those after it */
                        steps?: ({
                            /** @description Run with /bin/sh -c; a non-zero exit fails the build (step_failed) */
                            command: string;
                            /** @description Default 600 */
                            timeout_s?: number;
                            /** @enum {string} */
                            type: "run";
                            /** @description An account of the template's /etc/passwd: root, user (uid 1000, the default) or one a step added */
                            user?: string;
                        } | {
                            /** @description File content, base64; at most 4 MiB decoded */
                            content_base64: string;
                            /** @description Octal, default 0644 */
                            mode?: string;
                            /** @description Absolute path inside the sandbox */
                            path: string;
                            /** @enum {string} */
                            type: "copy";
                            /** @description Owner, default user; missing parent directories are created as this user */
                            user?: "root" | "user";
                        } | {
                            env: {
                                [key: string]: string;
                            };
                            /** @enum {string} */
                            type: "env";
                        } | {
                            /** @description Absolute path inside the sandbox */
                            path: string;
                            /** @enum {string} */
                            type: "workdir";
                        } | {
                            /** @description An uploaded build-context archive of the team (tar, gzip or not): what E2B's template builder uploads for its COPY */
                            archive: string;
                            /** @description Absolute, or relative to the working directory (default /home/user). A directory when it ends in /, is one already, or takes several entries or a directory; a directory src gives its contents, entries a pattern matched keep their names */
                            dest: string;
                            /** @description Octal mode of the copied files (directories keep theirs) */
                            mode?: string;
                            /** @description A path or shell pattern inside the archive: relative, without .. parts */
                            src: string;
                            /** @enum {string} */
                            type: "archive";
                            /** @description An account of the template's /etc/passwd: root, user (uid 1000, the default) or one a step added */
                            user?: string;
                        })[];
                        /** @description With from_image (or a Dockerfile FROM image) and no start_cmd: the image's ENTRYPOINT and CMD (shell-quoted) become start_cmd */
                        use_image_cmd?: boolean;
                        /** @description Pre-started sandboxes kept ready for instant create (default 0) */
                        warm_pool?: number;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                202: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description The template built on, or the image reference for image templates */
                            base: string;
                            /** @description The build this request started; follow it at /templates/{id}/builds/{build_id}/logs */
                            build_id: string;
                            /** @description gvisor: the current version was captured with start_cmd running, so sandboxes are restored from it instead of booting (set shortly after a build) */
                            captured: boolean;
                            /** Format: date-time */
                            created_at: string;
                            /** @description A platform/* template: visible to every team, read-only */
                            curated: boolean;
                            /** @description Set when status is failed: `<code>: <detail>` with code image_pull_failed, step_failed, boot_failed, snapshot_failed, start_cmd_failed, ready_cmd_failed or build_failed */
                            error?: string;
                            /** @description Set when the template is built from an image (from_image or a Dockerfile FROM image) */
                            from_image?: string;
                            /** @description UUID, or the name of a curated platform/* template */
                            id: string;
                            latest_build_id?: string;
                            name: string;
                            ready_cmd?: string;
                            ready_timeout_s: number;
                            resources: {
                                disk_mib: number;
                                memory_mib: number;
                                vcpu_count: number;
                            };
                            start_cmd?: string;
                            status: "building" | "ready" | "failed" | "pending";
                            steps: ({
                                /** @description Run with /bin/sh -c; a non-zero exit fails the build (step_failed) */
                                command: string;
                                /** @description Default 600 */
                                timeout_s?: number;
                                /** @enum {string} */
                                type: "run";
                                /** @description An account of the template's /etc/passwd: root, user (uid 1000, the default) or one a step added */
                                user?: string;
                            } | {
                                /** @description File content, base64; at most 4 MiB decoded */
                                content_base64: string;
                                /** @description Octal, default 0644 */
                                mode?: string;
                                /** @description Absolute path inside the sandbox */
                                path: string;
                                /** @enum {string} */
                                type: "copy";
                                /** @description Owner, default user; missing parent directories are created as this user */
                                user?: "root" | "user";
                            } | {
                                env: {
                                    [key: string]: string;
                                };
                                /** @enum {string} */
                                type: "env";
                            } | {
                                /** @description Absolute path inside the sandbox */
                                path: string;
                                /** @enum {string} */
                                type: "workdir";
                            } | {
                                /** @description An uploaded build-context archive of the team (tar, gzip or not): what E2B's template builder uploads for its COPY */
                                archive: string;
                                /** @description Absolute, or relative to the working directory (default /home/user). A directory when it ends in /, is one already, or takes several entries or a directory; a directory src gives its contents, entries a pattern matched keep their names */
                                dest: string;
                                /** @description Octal mode of the copied files (directories keep theirs) */
                                mode?: string;
                                /** @description A path or shell pattern inside the archive: relative, without .. parts */
                                src: string;
                                /** @enum {string} */
                                type: "archive";
                                /** @description An account of the template's /etc/passwd: root, user (uid 1000, the default) or one a step added */
                                user?: string;
                            })[];
                            /** Format: date-time */
                            updated_at: string;
                            /** @description Sandboxes can be created from it: a version is built (a rebuild that fails keeps the previous version) */
                            usable: boolean;
                            warm_pool: number;
                            /** @description Pre-started sandboxes waiting right now */
                            warm_pool_ready: number;
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                507: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/templates/{template_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a template by UUID or name */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description Template UUID or name (platform/* names included, URL-encoded) */
                    template_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Curated templates (platform/*) report status pending until first used, when they are built (and cached by recipe hash). */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Template"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /** Delete a team template (409 while sandboxes use it or it is building; 403 for platform/*) */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description Template UUID or name (platform/* names included, URL-encoded) */
                    template_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/templates/{template_id}/builds/{build_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A build: status, error and which steps ran or came from the cache */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    build_id: string;
                    template_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** Format: date-time */
                            created_at: string;
                            error?: string;
                            /** Format: date-time */
                            finished_at?: string;
                            id: string;
                            status: "building" | "ready" | "failed";
                            steps: {
                                duration_ms?: number;
                                index: number;
                                /** @description config: env/workdir steps, which change no files */
                                result: "ran" | "cached" | "failed" | "pending" | "config";
                                type: string;
                            }[];
                            template_id: string;
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/templates/{template_id}/builds/{build_id}/logs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The build log as server-sent events: every line so far, then live lines until the build ends
         * @description Each event is `data: {"timestamp", "line"}`; the last one is `{"timestamp", "finished": true, "status": "ready"|"failed", "error"?}`, after which the stream closes. Step output (stdout and stderr) and which steps ran or were cached appear as lines.
         */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    build_id: string;
                    template_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description text/event-stream */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": string;
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/terminals": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List terminal sessions */
        get: {
            parameters: {
                query?: never;
                header?: {
                    "x-access-token"?: string;
                    /** @description Not needed on the per-sandbox host */
                    "x-platform-sandbox-id"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            terminals: components["schemas"]["TerminalInfo"][];
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        /**
         * Create a terminal session (a PTY running as user; default `bash -l`, TERM=xterm-256color)
         * @description Connect with a WebSocket to GET /terminals/{id}/connect (same data-plane routing; browsers, which cannot set headers, may pass `access_token` and `sandbox_id` as query parameters). Server to client: binary frames carry raw terminal output (first the kept output, up to 256 KiB, so a reconnect repaints); a text frame `{"type":"exit","exit_code":n,"signal":n|null}` is sent when the process ends, then the socket closes with code 1000. Client to server: binary frames are raw input bytes; a text frame is a JSON control message `{"type":"resize","cols":n,"rows":n}` or `{"type":"input","data":"..."}`, and any other text frame is taken as raw input (so xterm.js AttachAddon works unchanged). The session outlives the socket; several sockets may be connected to one session at once. Close code 4404: no such terminal.
         */
        post: {
            parameters: {
                query?: never;
                header?: {
                    "x-access-token"?: string;
                    /** @description Not needed on the per-sandbox host */
                    "x-platform-sandbox-id"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        args?: string[];
                        /** @description Columns, default 80 */
                        cols?: number;
                        /** @description Default: the login shell `bash -l`. Run by /bin/sh -c unless args is given */
                        command?: string;
                        /** @description TERM defaults to xterm-256color */
                        env?: {
                            [key: string]: string;
                        };
                        /** @description Rows, default 24 */
                        rows?: number;
                        /** @description Default /home/user */
                        working_dir?: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["TerminalInfo"];
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/terminals/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A terminal session
         * @description Connect with a WebSocket to GET /terminals/{id}/connect (same data-plane routing; browsers, which cannot set headers, may pass `access_token` and `sandbox_id` as query parameters). Server to client: binary frames carry raw terminal output (first the kept output, up to 256 KiB, so a reconnect repaints); a text frame `{"type":"exit","exit_code":n,"signal":n|null}` is sent when the process ends, then the socket closes with code 1000. Client to server: binary frames are raw input bytes; a text frame is a JSON control message `{"type":"resize","cols":n,"rows":n}` or `{"type":"input","data":"..."}`, and any other text frame is taken as raw input (so xterm.js AttachAddon works unchanged). The session outlives the socket; several sockets may be connected to one session at once. Close code 4404: no such terminal.
         */
        get: {
            parameters: {
                query?: never;
                header?: {
                    "x-access-token"?: string;
                    /** @description Not needed on the per-sandbox host */
                    "x-platform-sandbox-id"?: string;
                };
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["TerminalInfo"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /** End a terminal session (SIGKILL to its process group) */
        delete: {
            parameters: {
                query?: never;
                header?: {
                    "x-access-token"?: string;
                    /** @description Not needed on the per-sandbox host */
                    "x-platform-sandbox-id"?: string;
                };
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Ended */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/volumes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the team's volumes, newest first */
        get: {
            parameters: {
                query?: {
                    cursor?: string;
                    /** @description Page size, 1 to 1000 (default 100) */
                    limit?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            next_cursor?: string;
                            volumes: components["schemas"]["Volume"][];
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        /**
         * Create a volume: a disk of the team that outlives sandboxes
         * @description 409: the team has a volume of that name. 429 too_many_volumes: the per-team cap. 503: this host keeps no volumes, or (several hosts) no node can take it. On several hosts the volume lives on one node: sandboxes that mount it run there, and while that node is lost the volume's routes answer 503.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description Unique in the team; letters, digits, `.`, `_`, `-` */
                        name: string;
                        /** @description Quota in MiB: writes past it fail inside (EDQUOT) and uploads answer 507 */
                        size_mib: number;
                    };
                };
            };
            responses: {
                /** @description A team's disk that outlives sandboxes; mount it with POST /sandboxes {volumes: [{volume, path}]} */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Volume"];
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                507: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/volumes/{volume}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a volume by id or name (503 while its node is lost, several hosts) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description Volume UUID or name */
                    volume: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description A team's disk that outlives sandboxes; mount it with POST /sandboxes {volumes: [{volume, path}]} */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Volume"];
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /** Delete a volume and its files, for good (409 while a sandbox that is not deleted mounts it) */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description Volume UUID or name */
                    volume: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        /** Grow a volume (400 on a smaller size) */
        patch: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description Volume UUID or name */
                    volume: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description New quota; only growing is allowed */
                        size_mib: number;
                    };
                };
            };
            responses: {
                /** @description A team's disk that outlives sandboxes; mount it with POST /sandboxes {volumes: [{volume, path}]} */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Volume"];
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        trace?: never;
    };
    "/volumes/{volume}/files": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Download a file of a volume (streamed, application/octet-stream, with Content-Length) */
        get: {
            parameters: {
                query: {
                    /** @description Path inside the volume, from its root (`/a/b` or `a/b`); no `..`; symlinks leading out of the volume are refused */
                    path: string;
                };
                header?: never;
                path: {
                    /** @description Volume UUID or name */
                    volume: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description The file content */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/octet-stream": string;
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        /**
         * Upload a file into a volume: the raw body becomes its content (streamed)
         * @description Missing parent directories are made; an existing file is replaced atomically (the data goes to a temporary file renamed when complete). Files and directories made are owned by `user`. 507 insufficient_storage: the volume is full (its size is its quota); nothing is written.
         */
        put: {
            parameters: {
                query: {
                    /** @description Path inside the volume, from its root (`/a/b` or `a/b`); no `..`; symlinks leading out of the volume are refused */
                    path: string;
                };
                header?: never;
                path: {
                    /** @description Volume UUID or name */
                    volume: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["VolumeFileEntry"];
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                507: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        post?: never;
        /** Delete a file, symlink or empty directory of a volume (409: a directory that is not empty) */
        delete: {
            parameters: {
                query: {
                    /** @description Path inside the volume, from its root (`/a/b` or `a/b`); no `..`; symlinks leading out of the volume are refused */
                    path: string;
                };
                header?: never;
                path: {
                    /** @description Volume UUID or name */
                    volume: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/volumes/{volume}/files/list": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List a directory of a volume (`/`: its root) */
        get: {
            parameters: {
                query: {
                    /** @description Path inside the volume, from its root (`/a/b` or `a/b`); no `..`; symlinks leading out of the volume are refused */
                    path: string;
                };
                header?: never;
                path: {
                    /** @description Volume UUID or name */
                    volume: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Sorted by name */
                            entries: components["schemas"]["VolumeFileEntry"][];
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The team's webhook endpoints */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            webhooks: components["schemas"]["Webhook"][];
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        /**
         * Register an endpoint for lifecycle events (needs webhooks:manage)
         * @description Each delivery is a POST of `{"id", "type", "time", "team_id", "data"}` (data: the resource as the API shows it) with `X-Sandpit-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" under the secret>`, X-Sandpit-Event-Id, X-Sandpit-Event-Type and X-Sandpit-Delivery-Id; any 2xx within 10 s is success, anything else is retried with exponential backoff for 24 h, in order per sandbox; redirects are not followed (docs/observability.md).
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description Inactive: no new deliveries are queued and queued ones wait */
                        active?: boolean;
                        description?: string;
                        /** @description Event types to receive: sandbox.created, sandbox.paused, sandbox.resumed, sandbox.deleted, sandbox.failed, sandbox.auto_paused, sandbox.auto_deleted, snapshot.ready, snapshot.failed, template.built, template.failed; or * for all */
                        events: string[];
                        /** @description Signing secret (HMAC-SHA256, header X-Sandpit-Signature); default: one is generated and answered once */
                        secret?: string;
                        /** @description http(s) URL; loopback, link-local, private and platform addresses are refused (400) unless SANDPIT_WEBHOOK_ALLOW_HOSTS lists its host:port */
                        url: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            active: boolean;
                            /** Format: date-time */
                            created_at: string;
                            description?: string;
                            events: string[];
                            id: string;
                            /** @description The signing secret: shown once */
                            secret: string;
                            /** Format: date-time */
                            updated_at: string;
                            url: string;
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{webhook_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A webhook endpoint */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    webhook_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Webhook"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /** Remove an endpoint; its queued deliveries are dropped */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    webhook_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        /** Change the URL, events, secret, description or active flag */
        patch: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    webhook_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description Inactive: no new deliveries are queued and queued ones wait */
                        active?: boolean;
                        description?: string | null;
                        /** @description Event types to receive: sandbox.created, sandbox.paused, sandbox.resumed, sandbox.deleted, sandbox.failed, sandbox.auto_paused, sandbox.auto_deleted, snapshot.ready, snapshot.failed, template.built, template.failed; or * for all */
                        events?: string[];
                        /** @description Signing secret (HMAC-SHA256, header X-Sandpit-Signature); default: one is generated and answered once */
                        secret?: string;
                        /** @description http(s) URL; loopback, link-local, private and platform addresses are refused (400) unless SANDPIT_WEBHOOK_ALLOW_HOSTS lists its host:port */
                        url?: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Webhook"];
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        trace?: never;
    };
    "/webhooks/{webhook_id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * An endpoint's deliveries, newest first: status, attempts, the status codes answered
         * @description Settled deliveries are kept 30 days.
         */
        get: {
            parameters: {
                query?: {
                    cursor?: string;
                    /** @description Page size, 1 to 1000 (default 100) */
                    limit?: string;
                    status?: "pending" | "delivered" | "failed";
                };
                header?: never;
                path: {
                    webhook_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            deliveries: components["schemas"]["WebhookDelivery"][];
                            next_cursor?: string;
                        };
                    };
                };
                /** @description Every error answers with this envelope */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{webhook_id}/test": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Queue a webhook.test delivery to the endpoint now (signed and retried like any other); follow it in the deliveries */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    webhook_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                202: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["WebhookDelivery"];
                    };
                };
                /** @description Every error answers with this envelope */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error answers with this envelope */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        AuditEntry: {
            /** @description Dotted name, e.g. sandbox.create, sandbox.exec, sandbox.terminal.open, secret.revoke, api_key.create, member.deactivate, webhook.update */
            action: string;
            actor: {
                key_id?: string;
                /** @description api_key: X-API-Key; console_session: the console, acting through the key it was opened with; access_token: a sandbox access token on the data plane */
                type: "api_key" | "console_session" | "access_token";
                user_id?: string;
            };
            /** Format: date-time */
            at: string;
            id: string;
            request: {
                ip: string;
                method: string;
                /** @description The route pattern (no query string, no body) */
                route: string;
                user_agent?: string;
            };
            resource: {
                id?: string;
                type: string;
            };
            /** @description The HTTP status the call answered */
            status: number;
            /** @description The OpenTelemetry trace of the call, when tracing is on */
            trace_id?: string;
        };
        BillingPeriod: {
            /** @description Null: shadow-mode periods need no approval */
            approved_at: string | null;
            /** @description Null: nothing blocks a period in shadow mode */
            blocked_reason: string | null;
            cancel_at_period_end: boolean;
            /** Format: date-time */
            current_period_end: string;
            /** Format: date-time */
            current_period_start: string;
            /** @description Null: periods are not exported to a payment processor */
            exported_at: string | null;
            /** @description Null while the period is open */
            finalized_at: string | null;
            /** @description Null: no payment processor */
            payments_customer_id: string | null;
            /** @description Null: no payment processor */
            payments_invoice_status: string | null;
            /** @description Null: no payment processor */
            payments_subscription_id: string | null;
            /** @description Null: no payment processor */
            payments_subscription_status: string | null;
            /** Format: date-time */
            period_end: string;
            period_id: string;
            /** Format: date-time */
            period_start: string;
            /** @description open: the current period, still accruing; finalized: ended, totals frozen */
            status: string;
        };
        BillingPricedResourceLine: {
            /** @description Charged under the team's plan (its rate is above zero) */
            billable: boolean;
            /** @description USD. usage x unit_price_usd, before credits */
            charge_usd: number;
            display_name: string;
            /** @description Unit people read and prices are quoted in: vCPU-hour or GiB-hour */
            display_unit: string;
            /** @description Cost group: compute, memory or storage */
            resource: string;
            /** @description Stable key: vcpu_seconds, memory_mib_seconds, storage_mib_seconds */
            resource_key: string;
            sort_order: number;
            /** @description Metered by this platform */
            tracked: boolean;
            /** @description Unit of `usage`: vcpu_second or mib_second */
            unit: string;
            /** @description USD per `unit` at the team's current rates */
            unit_price_usd: number;
            /** @description Usage in `unit` */
            usage: number;
        };
        BillingResourceLine: {
            /** @description Charged under the team's plan (its rate is above zero) */
            billable: boolean;
            display_name: string;
            /** @description Unit people read and prices are quoted in: vCPU-hour or GiB-hour */
            display_unit: string;
            /** @description Cost group: compute, memory or storage */
            resource: string;
            /** @description Stable key: vcpu_seconds, memory_mib_seconds, storage_mib_seconds */
            resource_key: string;
            sort_order: number;
            /** @description Metered by this platform */
            tracked: boolean;
            /** @description Unit of `usage`: vcpu_second or mib_second */
            unit: string;
            /** @description Usage in `unit` */
            usage: number;
        };
        BillingSummary: {
            /** @description Same as mode */
            billing_mode: "shadow" | "live";
            billing_period: {
                /** Format: date-time */
                end: string;
                /** Format: date-time */
                start: string;
            };
            /** Format: date-time */
            calculated_at: string;
            checkout_available: boolean;
            cost_breakdown_usd: {
                compute: number;
                memory: number;
                storage: number;
            };
            /** Format: date-time */
            credit_observed_at: string;
            /** @description local_trial: credits come from the local ledger */
            credit_source: "local_trial" | "payments";
            credit_status: "available" | "unavailable";
            /** @description USD. Credits applied against current charges */
            credits_applied_usd: number;
            /** @description USD. Credits left after applying current charges */
            credits_remaining_usd: number;
            /** @description USD. Charges of the current period so far, before credits */
            current_charges_usd: number;
            /** @description USD. Invoice amount after credits */
            expected_invoice_amount_usd: number;
            /** @description Always shadow here: charges are computed, nothing is collected */
            mode: "shadow" | "live";
            payment_setup_required: boolean;
            /** @description USD. 0: no payment processor is connected */
            payments_credit_balance_usd: number;
            /** @description USD. 0: no payment processor is connected */
            payments_credits_applied_usd: number;
            /** @description Remaining credit at the payment processor; null: none is connected */
            payments_remaining_credit_usd: number | null;
            permissions: {
                /** @description False in shadow mode: there is no payment set-up to manage */
                can_manage: boolean;
                can_view: boolean;
            };
            portal_available: boolean;
            pricing_tier: {
                currency: string;
                plan_key: string;
                plan_name: string;
            };
            resources: components["schemas"]["BillingPricedResourceLine"][];
            /** @description The same lines keyed by resource_key */
            resources_by_key: {
                [key: string]: components["schemas"]["BillingPricedResourceLine"];
            };
            trial: {
                /** @description Part of the grant used by finalized periods and current charges (trial credit is applied first) */
                consumed_usd: number;
                /** @description The team's plan grants a trial */
                eligible: boolean;
                grant_usd: number;
                remaining_usd: number;
                /** @description active (credit left), exhausted (used up) or none (no grant) */
                state: string;
            };
        };
        /** @description A path whose content differs in the sandbox's writable layer from its base */
        Change: {
            kind: "added" | "modified" | "deleted";
            path: string;
            /**
             * Format: int64
             * @description Bytes of a file now (before, for a deletion); 0 for other types
             */
            size: number;
            type: "file" | "dir" | "symlink" | "other";
        };
        /** @description Every error answers with this envelope */
        Error: {
            error: {
                /**
                 * @description Stable, machine-readable code
                 * @enum {string}
                 */
                code: "bad_request" | "unauthorized" | "forbidden" | "not_found" | "method_not_allowed" | "request_timeout" | "conflict" | "gone" | "payload_too_large" | "uri_too_long" | "unsupported_media_type" | "rate_limited" | "too_many_sandboxes" | "too_many_snapshots" | "too_many_snapshots_in_flight" | "too_many_builds" | "too_many_templates" | "too_many_volumes" | "header_fields_too_large" | "internal" | "bad_gateway" | "sandbox_not_running" | "port_not_open" | "unavailable" | "insufficient_storage";
                /** @description Human-readable; may change between releases */
                message: string;
            };
        };
        FileEntry: {
            /** @description Permission bits, e.g. 420 = 0644 */
            mode: number;
            /** Format: date-time */
            modified_at: string;
            name: string;
            /** @description Absolute path */
            path: string;
            /** @description e.g. rw-r--r-- */
            permissions: string;
            size: number;
            symlink_target?: string;
            /** @description A symlink is reported as itself, not followed */
            type: "file" | "dir" | "symlink" | "other";
        };
        ProcessInfo: {
            args: string[];
            command: string;
            /** @description Present once exited; 128+n when killed by signal n */
            exit_code?: number;
            id: string;
            /** @description Process id inside the sandbox */
            pid: number;
            running: boolean;
            signal?: number;
            /** Format: date-time */
            started_at: string;
            working_dir: string;
        };
        RoleAssignment: {
            /** Format: uuid */
            assignment_id: string;
            /** Format: date-time */
            created_at: string;
            email: string;
            /** Format: date-time */
            granted_at: string;
            /**
             * Format: uuid
             * @description User whose API key granted it (a team's first owner granted itself)
             */
            granted_by: string;
            /** @description Null while the role is held */
            revoked_at: string | null;
            /** @description owner, admin, member or billing_viewer */
            role_name: string;
            /** @description Always team */
            scope_type: string;
            /** Format: uuid */
            team_id: string;
            /** Format: date-time */
            updated_at: string;
            /** Format: uuid */
            user_id: string;
        };
        Sandbox: {
            /** Format: date-time */
            auto_delete_at?: string;
            auto_delete_seconds?: number;
            /** @description Present (false) when an auto-pause keeps only the disk */
            auto_pause_keep_memory?: boolean;
            auto_pause_seconds?: number;
            /** Format: date-time */
            created_at: string;
            /** @description Runtime driver the sandbox runs on */
            driver: string;
            /** @description With status failed: why. engine_exited (the engine died under the sandbox), engine_out_of_memory (the host killed the engine for memory), engine_lost (gone after a host restart), node_lost (its node fell silent past the deadline; several hosts), pause_failed (the save of a pause or snapshot took the sandbox down). */
            failure_reason?: string;
            /** @description Region-tagged id sb-<region>-<uuid> */
            id: string;
            /** @description Present (false) while paused keeping only the disk: resume boots it afresh, its processes do not continue */
            kept_memory?: boolean;
            /** @description After POST /sandboxes/{id}/snapshot: that snapshot. After a pause on a driver that pauses to disk (gvisor): the id of the checkpoint the sandbox resumes from, which is not a Snapshot resource. */
            latest_snapshot_id?: string;
            /** @description At most 64 keys, keys at most 256 bytes, values at most 2048 bytes, 16384 bytes serialized; keys starting with platform. or _platform (any case) are reserved */
            metadata: {
                [key: string]: string;
            };
            name?: string;
            /** @description 10/8, 172.16/12, 192.168/16, 127/8 and 169.254/16 are always blocked */
            network?: {
                /** @description CIDRs and domain names (wildcard *.<domain>); when present everything else is denied */
                allow_out?: string[];
                /** @description CIDRs only */
                deny_out?: string[];
            };
            /** @description The node holding it (several hosts), shown to keys with sandboxes:move */
            node?: string;
            preview_access: "legacy_public" | "public" | "private";
            region: string;
            resources: {
                disk_mib: number;
                memory_mib: number;
                vcpu_count: number;
            };
            secrets: {
                env: string;
                revoked: boolean;
                secret: string;
            }[];
            status: "active" | "pausing" | "paused" | "resuming" | "migrating" | "failed";
            template_id: string;
            /** Format: date-time */
            updated_at: string;
        };
        SandboxWithToken: {
            /** @description Send as X-Access-Token to the data plane */
            access_token: string;
            /** Format: date-time */
            auto_delete_at?: string;
            auto_delete_seconds?: number;
            /** @description Present (false) when an auto-pause keeps only the disk */
            auto_pause_keep_memory?: boolean;
            auto_pause_seconds?: number;
            /** Format: date-time */
            created_at: string;
            /** @description Runtime driver the sandbox runs on */
            driver: string;
            /** @description With status failed: why. engine_exited (the engine died under the sandbox), engine_out_of_memory (the host killed the engine for memory), engine_lost (gone after a host restart), node_lost (its node fell silent past the deadline; several hosts), pause_failed (the save of a pause or snapshot took the sandbox down). */
            failure_reason?: string;
            /** @description Region-tagged id sb-<region>-<uuid> */
            id: string;
            /** @description Present (false) while paused keeping only the disk: resume boots it afresh, its processes do not continue */
            kept_memory?: boolean;
            /** @description After POST /sandboxes/{id}/snapshot: that snapshot. After a pause on a driver that pauses to disk (gvisor): the id of the checkpoint the sandbox resumes from, which is not a Snapshot resource. */
            latest_snapshot_id?: string;
            /** @description At most 64 keys, keys at most 256 bytes, values at most 2048 bytes, 16384 bytes serialized; keys starting with platform. or _platform (any case) are reserved */
            metadata: {
                [key: string]: string;
            };
            name?: string;
            /** @description 10/8, 172.16/12, 192.168/16, 127/8 and 169.254/16 are always blocked */
            network?: {
                /** @description CIDRs and domain names (wildcard *.<domain>); when present everything else is denied */
                allow_out?: string[];
                /** @description CIDRs only */
                deny_out?: string[];
            };
            /** @description The node holding it (several hosts), shown to keys with sandboxes:move */
            node?: string;
            preview_access: "legacy_public" | "public" | "private";
            region: string;
            resources: {
                disk_mib: number;
                memory_mib: number;
                vcpu_count: number;
            };
            secrets: {
                env: string;
                revoked: boolean;
                secret: string;
            }[];
            status: "active" | "pausing" | "paused" | "resuming" | "migrating" | "failed";
            template_id: string;
            /** Format: date-time */
            updated_at: string;
        };
        /** @description Kept until deleted; outlives the sandbox it came from. Start a sandbox from it with POST /sandboxes {from_snapshot}. */
        Snapshot: {
            /** Format: date-time */
            created_at: string;
            /** Format: uuid */
            id: string;
            /**
             * @description Memory and disk
             * @enum {string}
             */
            kind: "mem+fs";
            name: string | null;
            ready_at: string | null;
            resources: {
                disk_mib: number;
                memory_mib: number;
                vcpu_count: number;
            };
            /**
             * Format: uuid
             * @description Bare UUID of the sandbox it was taken from; that sandbox may since have been deleted
             */
            sandbox_id: string;
            /**
             * Format: int64
             * @description Bytes held on disk (memory image and disk layer), copies kept on other nodes included; 0 until ready
             */
            size_bytes: number;
            status: "creating" | "ready" | "failed" | "deleting";
            /** @description Template the captured sandbox was created from */
            template_id: string | null;
        };
        TeamBillingUsage: {
            cpu_vcpu_hours: number;
            /** @description Null: periods are not exported to a payment processor */
            exported_at: string | null;
            /** @description Null while the period is open */
            finalized_at: string | null;
            memory_gib_hours: number;
            memory_mib_seconds: number;
            /** Format: date-time */
            period_end: string;
            period_id: string;
            /** Format: date-time */
            period_start: string;
            resources: components["schemas"]["BillingResourceLine"][];
            resources_by_key: {
                [key: string]: components["schemas"]["BillingResourceLine"];
            };
            /** @description open: the current period, still accruing; finalized: ended, totals frozen */
            status: string;
            storage_gib_hours: number;
            storage_mib_seconds: number;
            /** Format: uuid */
            team_id: string;
            /** Format: date-time */
            updated_at: string;
            vcpu_seconds: number;
        };
        TeamMember: {
            /** Format: date-time */
            created_at: string;
            email: string;
            full_name: string;
            /** @description Roles held now: owner, admin, member or billing_viewer */
            roles: string[];
            /** @description active or deactivated */
            status: string;
            /** Format: date-time */
            updated_at: string;
            /** Format: uuid */
            user_id: string;
        };
        /** @description Curated templates (platform/*) report status pending until first used, when they are built (and cached by recipe hash). */
        Template: {
            /** @description The template built on, or the image reference for image templates */
            base: string;
            /** @description gvisor: the current version was captured with start_cmd running, so sandboxes are restored from it instead of booting (set shortly after a build) */
            captured: boolean;
            /** Format: date-time */
            created_at: string;
            /** @description A platform/* template: visible to every team, read-only */
            curated: boolean;
            /** @description Set when status is failed: `<code>: <detail>` with code image_pull_failed, step_failed, boot_failed, snapshot_failed, start_cmd_failed, ready_cmd_failed or build_failed */
            error?: string;
            /** @description Set when the template is built from an image (from_image or a Dockerfile FROM image) */
            from_image?: string;
            /** @description UUID, or the name of a curated platform/* template */
            id: string;
            latest_build_id?: string;
            name: string;
            ready_cmd?: string;
            ready_timeout_s: number;
            resources: {
                disk_mib: number;
                memory_mib: number;
                vcpu_count: number;
            };
            start_cmd?: string;
            status: "building" | "ready" | "failed" | "pending";
            steps: ({
                /** @description Run with /bin/sh -c; a non-zero exit fails the build (step_failed) */
                command: string;
                /** @description Default 600 */
                timeout_s?: number;
                /** @enum {string} */
                type: "run";
                /** @description An account of the template's /etc/passwd: root, user (uid 1000, the default) or one a step added */
                user?: string;
            } | {
                /** @description File content, base64; at most 4 MiB decoded */
                content_base64: string;
                /** @description Octal, default 0644 */
                mode?: string;
                /** @description Absolute path inside the sandbox */
                path: string;
                /** @enum {string} */
                type: "copy";
                /** @description Owner, default user; missing parent directories are created as this user */
                user?: "root" | "user";
            } | {
                env: {
                    [key: string]: string;
                };
                /** @enum {string} */
                type: "env";
            } | {
                /** @description Absolute path inside the sandbox */
                path: string;
                /** @enum {string} */
                type: "workdir";
            } | {
                /** @description An uploaded build-context archive of the team (tar, gzip or not): what E2B's template builder uploads for its COPY */
                archive: string;
                /** @description Absolute, or relative to the working directory (default /home/user). A directory when it ends in /, is one already, or takes several entries or a directory; a directory src gives its contents, entries a pattern matched keep their names */
                dest: string;
                /** @description Octal mode of the copied files (directories keep theirs) */
                mode?: string;
                /** @description A path or shell pattern inside the archive: relative, without .. parts */
                src: string;
                /** @enum {string} */
                type: "archive";
                /** @description An account of the template's /etc/passwd: root, user (uid 1000, the default) or one a step added */
                user?: string;
            })[];
            /** Format: date-time */
            updated_at: string;
            /** @description Sandboxes can be created from it: a version is built (a rebuild that fails keeps the previous version) */
            usable: boolean;
            warm_pool: number;
            /** @description Pre-started sandboxes waiting right now */
            warm_pool_ready: number;
        };
        TerminalInfo: {
            args: string[];
            cols: number;
            command: string;
            /** Format: date-time */
            created_at: string;
            exit_code?: number;
            id: string;
            pid: number;
            rows: number;
            running: boolean;
        };
        /** @description A team's disk that outlives sandboxes; mount it with POST /sandboxes {volumes: [{volume, path}]} */
        Volume: {
            /** Format: date-time */
            created_at: string;
            /** Format: uuid */
            id: string;
            /** @description Sandboxes that mount it now (not deleted) */
            mounted_by: string[];
            name: string;
            size_mib: number;
            /**
             * Format: int64
             * @description Bytes its files hold (accounted by the file system; may lag writes by seconds)
             */
            used_bytes: number;
        };
        VolumeFileEntry: {
            /** Format: date-time */
            modified_at: string;
            name: string;
            /** @description From the volume's root */
            path: string;
            size: number;
            type: "file" | "dir" | "symlink" | "other";
        };
        Webhook: {
            active: boolean;
            /** Format: date-time */
            created_at: string;
            description?: string;
            events: string[];
            id: string;
            /** Format: date-time */
            updated_at: string;
            url: string;
        };
        WebhookDelivery: {
            /** @description The last 50 attempts, oldest first */
            attempt_log: {
                /** Format: date-time */
                at: string;
                duration_ms: number;
                error?: string;
                status_code?: number;
            }[];
            attempts: number;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            delivered_at?: string;
            /** @description The same on every attempt and on every endpoint: receivers deduplicate with it */
            event_id: string;
            event_type: string;
            id: string;
            /** @description Why the last attempt got no answer (timeout, connection refused, ...) */
            last_error?: string;
            /** @description HTTP status of the last attempt (absent when it got no answer) */
            last_status_code?: number;
            /** Format: date-time */
            next_attempt_at?: string;
            /** @description pending: queued or being retried; delivered: answered 2xx; failed: no 2xx within 24 h */
            status: "pending" | "delivered" | "failed";
            webhook_id: string;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export type operations = Record<string, never>;
