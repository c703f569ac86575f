// The relative links of the project's Markdown pages, checked the way GitHub renders them: the
// file must exist, and a `#fragment` must name a heading of the page it points at.
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a Markdown file's headings (fenced code skipped; repeats get -1, -2, …). */
export function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const heading = !fenced && /^#{1,6}\s+(.*)$/.exec(line);
    if (!heading) continue;
    const anchor = headingAnchor(heading[1]);
    let unique = anchor;
    for (let n = 1; anchors.has(unique); n++) unique = `${anchor}-${n}`;
    anchors.add(unique);
  }
  return anchors;
}

/** Every relative link target of a Markdown file (`[text](target)`), outside fenced code. */
export function relativeLinks(file: string): string[] {
  const text = readFileSync(file, 'utf8').replace(/^\s*```[\s\S]*?^\s*```/gm, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map(([, target]) => target)
    .filter((target) => !/^[a-z]+:/i.test(target));
}

/** The links of a Markdown file that lead nowhere: a missing file, or an unknown heading. */
export function brokenLinks(file: string): string[] {
  return relativeLinks(file).filter((link) => {
    const [target, fragment] = link.split('#');
    const resolved = target === '' ? file : path.resolve(path.dirname(file), target);
    if (!existsSync(resolved)) return true;
    if (fragment === undefined) return false;
    return !(statSync(resolved).isFile() && anchorsOf(resolved).has(fragment));
  });
}
