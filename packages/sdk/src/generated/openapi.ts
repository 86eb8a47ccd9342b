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
                            /** @description Template with {port} and {sandbox_id} */
                            preview_url: string;
                            region: string;
                            /** @description Template with {sandbox_id} */
                            sandbox_url: string;
                            version: string;
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
                        auto_pause_seconds?: number;
                        env?: {
                            [key: string]: string;
                        };
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
                        /** @description env-var name -> secret name; the sandbox sees only a proxy token */
                        secrets?: {
                            [key: string]: string;
                        };
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
            requestBody?: never;
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
            };
        };
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
    "/sandboxes/{sandbox_id}/pause": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Pause a sandbox (409 when already paused) */
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
            requestBody?: never;
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
        /** @description Every error answers with this envelope */
        Error: {
            error: {
                /** @description Stable, machine-readable code */
                code: string;
                /** @description Human-readable; may change between releases */
                message: string;
            };
        };
        Sandbox: {
            /** Format: date-time */
            auto_delete_at?: string;
            auto_delete_seconds?: number;
            auto_pause_seconds?: number;
            /** Format: date-time */
            created_at: string;
            /** @description Runtime driver the sandbox runs on */
            driver: string;
            /** @description Region-tagged id sb-<region>-<uuid> */
            id: string;
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
            auto_pause_seconds?: number;
            /** Format: date-time */
            created_at: string;
            /** @description Runtime driver the sandbox runs on */
            driver: string;
            /** @description Region-tagged id sb-<region>-<uuid> */
            id: string;
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
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export type operations = Record<string, never>;
