import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { notFound } from '../errors.ts';
import type { VolumeService } from '../services/volumes/volumes.ts';

/** A node's internal volume facts for its API replicas (the node guard has checked their token): the bytes a volume it keeps holds, for their lists. */
export async function nodeVolumeRoutes(app: FastifyInstance, volumes: VolumeService) {
  app.get<{ Params: { volume_id: string } }>(
    '/internal/volumes/:volume_id/usage',
    { schema: { hide: true, params: Type.Object({ volume_id: Type.String({ pattern: '^[0-9a-f-]{36}$' }) }) } },
    async (req) => {
      const used = await volumes.usageHere(req.params.volume_id);
      if (used === undefined) throw notFound('no such volume on this node');
      return { used_bytes: used };
    },
  );
}
