// `npm run release:pin -- --tag <tag> --digest sha256:<digest> [--overlay <dir>]`: sets the image
// the prod overlay deploys (its kustomize `images` entry) to the tag and digest the release built
// and scanned (docs/releasing.md). Commit the result.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { formatAs } from './lib/format.mjs';
import { pinImage } from './lib/image-pin.mjs';

const { values } = parseArgs({
  options: {
    tag: { type: 'string' },
    digest: { type: 'string' },
    overlay: {
      type: 'string',
      default: path.resolve(import.meta.dirname, '..', 'k8s', 'overlays', 'prod'),
    },
  },
});
if (!values.tag || !values.digest) {
  console.error('usage: npm run release:pin -- --tag <tag> --digest sha256:<digest>');
  process.exit(2);
}
const file = path.join(values.overlay, 'kustomization.yaml');
const text = pinImage(await readFile(file, 'utf8'), { tag: values.tag, digest: values.digest });
await writeFile(file, await formatAs(file, text));
console.error(`release:pin: ${path.relative(process.cwd(), file)}: ${values.tag}@${values.digest}`);
