// What the operations specs read out of PromQL: the metric names an expression selects (for the
// check that dashboards and rules only query what the service exports), and the rules of rule
// groups by kind.
import type { Rule, RuleGroup } from '../../scripts/lib/slo-rules.mjs';

const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan', 'atan2']);

/**
 * The metric names an expression selects: every name outside strings, label matchers, ranges,
 * grouping clauses (`by (le)`) and function calls. Grafana's `$variables` are dropped first.
 */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/\$\{?\w+\}?/g, ' ')
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/(?<![\w:])\d+(?:\.\d+)?(?:e[+-]?\d+|ms|[smhdwy])?/gi, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\b(?:group_left|group_right)\b/g, ' ');
  const names = [...bare.matchAll(/([A-Za-z_:][\w:]*)(?!\w|:)(\s*\()?/g)]
    .filter(([, name, call]) => !call && !KEYWORDS.has(name.toLowerCase()))
    .map(([, name]) => name);
  return [...new Set(names)].sort();
}

/** The alerting rules of rule groups, in order. */
export function alertRules(groups: RuleGroup[]): (Rule & { alert: string })[] {
  return groups
    .flatMap((group) => group.rules)
    .filter((rule) => rule.alert !== undefined) as (Rule & {
    alert: string;
  })[];
}

/** The names the recording rules of rule groups record. */
export function recordedNames(groups: RuleGroup[]): string[] {
  return [
    ...new Set(groups.flatMap((group) => group.rules).flatMap((rule) => rule.record ?? [])),
  ].sort();
}
