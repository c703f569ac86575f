// The image the prod overlay deploys: its kustomize `images` entry, tag and digest, set in one
// step by `npm run release:pin` (docs/releasing.md). The committed zero digest pins nothing real.
import { parseDocument } from 'yaml';

/** The digest committed before any release: `npm run prod:check` refuses it. */
export const PLACEHOLDER_DIGEST = `sha256:${'0'.repeat(64)}`;

/**
 * A kustomization with the service's image entry set to `tag` and `digest`, comments kept.
 * @param {string} text kustomization.yaml
 * @param {{ tag: string; digest: string }} release
 * @returns {string}
 */
export function pinImage(text, { tag, digest }) {
  // The tag names the migration Job (users-service-migrate-<tag>): a name's characters only.
  if (!/^[a-z0-9][a-z0-9.-]*$/.test(tag))
    throw new Error(`tag ${tag}: lowercase, digits, '.', '-'`);
  if (!/^sha256:[0-9a-f]{64}$/.test(digest)) throw new Error(`digest ${digest}: sha256:<64 hex>`);
  const doc = parseDocument(text);
  const images = /** @type {{ items: unknown[] } | undefined} */ (doc.get('images'));
  const index =
    images?.items.findIndex((_, i) => doc.getIn(['images', i, 'name']) === 'users-service') ?? -1;
  if (index < 0) throw new Error('no images entry named users-service');
  doc.setIn(['images', index, 'newTag'], tag);
  doc.setIn(['images', index, 'digest'], digest);
  return doc.toString({ lineWidth: 0 });
}
