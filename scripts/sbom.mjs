// `npm run sbom [-- --output <file>]`: writes the CycloneDX SBOM of the service's production
// dependencies (sbom.cdx.json by default) and fails (exit 1) when it misses one of them
// (scripts/lib/sbom.mjs). CI runs it; a release attaches the file to the image it describes
// (docs/releasing.md).
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { generateSbom, sbomProblems } from './lib/sbom.mjs';

const { values } = parseArgs({ options: { output: { type: 'string', default: 'sbom.cdx.json' } } });
const sbom = generateSbom();
await writeFile(values.output, `${JSON.stringify(sbom, null, 2)}\n`);
const problems = sbomProblems(sbom);
for (const problem of problems) console.error(`sbom: ${problem}`);
console.log(
  `sbom: ${values.output}: CycloneDX ${sbom.specVersion}, ${sbom.components.length} components${problems.length ? `, ${problems.length} problems` : ''}`,
);
process.exit(problems.length > 0 ? 1 : 0);
