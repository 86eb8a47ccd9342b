import { iso } from '../../clock.ts';
import { badRequest } from '../../errors.ts';
import type { TerminalBody, TerminalInfo } from '../../schemas/terminal.ts';
import type { SandboxRecord } from '../../store/sandboxes.ts';
import { type Session, type SessionExit, type SessionRegistry, TERMINAL_REPLAY_BYTES } from './sessions.ts';

/** What a connected terminal client is told, besides raw output bytes. */
export interface TerminalPeer {
  output(data: Buffer): void;
  exit(exit: SessionExit): void;
}

/**
 * PTY sessions. The pty itself is opened by the agent with openpty-style /dev/ptmx calls (the
 * maintained libc PTY interface) and the session runs as a background agent process, so it
 * survives WebSocket disconnects; output while nobody is connected is kept (last 256 KiB) and
 * replayed on reconnect.
 */
export class TerminalService {
  readonly sessions: SessionRegistry;

  constructor(sessions: SessionRegistry) {
    this.sessions = sessions;
  }

  info(s: Session): TerminalInfo {
    const [command = '', ...args] = s.meta.argv;
    const out: TerminalInfo = {
      id: s.id,
      pid: s.pid,
      command,
      args,
      cols: s.meta.cols ?? 80,
      rows: s.meta.rows ?? 24,
      created_at: iso(s.meta.startedAt),
      running: !s.exit,
    };
    if (s.exit) out.exit_code = s.exit.exitCode;
    return out;
  }

  async create(rec: SandboxRecord, body: TerminalBody): Promise<TerminalInfo> {
    const cols = body.cols ?? 80;
    const rows = body.rows ?? 24;
    const argv = body.command === undefined ? ['/bin/bash', '-l'] : body.args ? [body.command, ...body.args] : ['/bin/sh', '-c', body.command];
    const s = await this.sessions.start(rec, {
      kind: 'terminal',
      argv,
      env: { TERM: 'xterm-256color', ...body.env },
      cwd: body.working_dir,
      pty: { cols, rows },
      outputBytes: TERMINAL_REPLAY_BYTES,
    });
    return this.info(s);
  }

  async list(rec: SandboxRecord): Promise<TerminalInfo[]> {
    return (await this.sessions.list(rec, 'terminal')).map((s) => this.info(s));
  }

  async get(rec: SandboxRecord, id: string): Promise<TerminalInfo> {
    return this.info(await this.sessions.get(rec, 'terminal', id));
  }

  /** Looks the session up first, so a missing one answers 404 before the WebSocket upgrade. */
  async open(rec: SandboxRecord, id: string): Promise<Session> {
    return this.sessions.get(rec, 'terminal', id);
  }

  /** Replays kept output to the peer, then follows; returns the input side and a detach. */
  connect(s: Session, peer: TerminalPeer) {
    const detach = s.subscribe(
      (_stream, data) => peer.output(data),
      (exit) => peer.exit(exit),
    );
    return {
      detach,
      input(data: Buffer): void {
        if (!s.exit && s.proc) s.proc.write(data);
      },
      resize(cols: number, rows: number): void {
        if (!Number.isInteger(cols) || !Number.isInteger(rows) || cols < 1 || rows < 1 || cols > 1000 || rows > 1000) {
          throw badRequest('cols and rows must be integers from 1 to 1000');
        }
        s.meta.cols = cols;
        s.meta.rows = rows;
        if (!s.exit) s.proc?.resize(cols, rows);
      },
    };
  }

  remove(rec: SandboxRecord, id: string): Promise<void> {
    return this.sessions.remove(rec, 'terminal', id);
  }
}
