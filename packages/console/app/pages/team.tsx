import { useState } from 'preact/hooks';
import { del, get, type Me, post, when } from '../api.ts';
import { ErrorText, Section, Status, Table, useAction, usePoll } from '../ui.tsx';

interface Member {
  user_id: string;
  email: string;
  full_name: string;
  status: string;
  roles: string[];
  created_at: string;
}

interface Management {
  members: Member[];
  capabilities: { can_invite_members: boolean; can_deactivate_members: boolean; can_assign_roles: boolean; can_revoke_roles: boolean };
  mutation_options: { assignable_roles: string[] };
}

export function TeamPage({ me }: { me: Me }) {
  const base = `/teams/${me.team_id}`;
  const team = usePoll(() => get<Management>(`${base}/management`), [base]);
  const [email, setEmail] = useState('');
  const [fullName, setFullName] = useState('');
  const [role, setRole] = useState('member');
  const [issued, setIssued] = useState<string | undefined>(undefined);
  const { busy, error, run } = useAction();
  const invite = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const res = await post<{ api_key: { key: string } }>(`${base}/members`, { email, full_name: fullName, role });
      setIssued(res.api_key.key);
      setEmail('');
      setFullName('');
      await team.reload();
    });
  };
  const caps = team.data?.capabilities;
  return (
    <>
      <h1>Team</h1>
      <ErrorText error={error ?? team.error} />
      <Table
        rows={team.data?.members}
        rowKey={(m) => m.user_id}
        columns={[
          {
            head: 'Member',
            cell: (m) => (
              <>
                {m.full_name}
                <div class="sub">{m.email}</div>
              </>
            ),
          },
          {
            head: 'Roles',
            cell: (m) => (
              <>
                {m.roles.map((r) => (
                  <span class="tag" key={r}>
                    {r}
                    {caps?.can_revoke_roles && team.data?.mutation_options.assignable_roles.includes(r) && (
                      <button
                        type="button"
                        class="link"
                        aria-label={`Revoke ${r} from ${m.email}`}
                        disabled={busy}
                        onClick={() =>
                          run(async () => {
                            await del(`${base}/members/${m.user_id}/roles/${r}`);
                            await team.reload();
                          })
                        }
                      >
                        ×
                      </button>
                    )}
                  </span>
                ))}
                {caps?.can_assign_roles && m.status === 'active' && (
                  <select
                    aria-label={`Grant a role to ${m.email}`}
                    value=""
                    disabled={busy}
                    onChange={(e) => {
                      const role = e.currentTarget.value;
                      if (role)
                        void run(async () => {
                          await post(`${base}/members/${m.user_id}/roles`, { role_name: role });
                          await team.reload();
                        });
                    }}
                  >
                    <option value="">grant…</option>
                    {team.data?.mutation_options.assignable_roles
                      .filter((r) => !m.roles.includes(r))
                      .map((r) => (
                        <option key={r}>{r}</option>
                      ))}
                  </select>
                )}
              </>
            ),
          },
          { head: 'Status', cell: (m) => <Status status={m.status} /> },
          { head: 'Since', cell: (m) => when(m.created_at) },
          {
            head: '',
            cell: (m) =>
              caps?.can_deactivate_members &&
              m.status === 'active' &&
              m.user_id !== me.user_id && (
                <button
                  type="button"
                  class="small danger"
                  disabled={busy}
                  onClick={() =>
                    run(async () => {
                      await del(`${base}/members/${m.user_id}`);
                      await team.reload();
                    })
                  }
                >
                  Deactivate
                </button>
              ),
          },
        ]}
      />
      {caps?.can_invite_members && (
        <Section title="Add a member">
          <form class="form" onSubmit={invite}>
            <label for="member-email">Email</label>
            <input id="member-email" type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
            <label for="member-name">Full name</label>
            <input id="member-name" required value={fullName} onInput={(e) => setFullName(e.currentTarget.value)} />
            <label for="member-role">Role</label>
            <select id="member-role" value={role} onChange={(e) => setRole(e.currentTarget.value)}>
              {team.data?.mutation_options.assignable_roles.map((r) => (
                <option key={r}>{r}</option>
              ))}
            </select>
            <button type="submit" disabled={busy}>
              Add member
            </button>
            {issued && (
              <p role="status">
                Their first API key (shown once): <code class="secret">{issued}</code>
              </p>
            )}
          </form>
        </Section>
      )}
    </>
  );
}
