/**
 * A fast-check arbitrary of workflow-xml documents: the three root elements
 * with their known elements present or not, mapped lists of any length, and
 * unknown elements, attributes and comments interleaved. Serialized here, not
 * by the code under test, with text sometimes as CDATA or character references.
 */
import fc from 'fast-check';
import { attributeText, filePath, xmlText } from './arbitraries.js';

type Node = { name: string; attributes: Array<[string, string]>; children: Node[]; text?: string; cdata?: boolean } | { comment: string };

const escapeText = (value: string) => value.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
const escapeAttribute = (value: string) => escapeText(value).replaceAll('"', '&quot;');

function serialize(node: Node, indent: string): string {
  if ('comment' in node) return `${indent}<!--${node.comment}-->`;
  const attributes = node.attributes.map(([name, value]) => ` ${name}="${escapeAttribute(value)}"`).join('');
  if (node.text !== undefined) {
    const body = node.cdata === true ? `<![CDATA[${node.text}]]>` : escapeText(node.text).replaceAll('é', '&#233;');
    return `${indent}<${node.name}${attributes}>${body}</${node.name}>`;
  }
  if (node.children.length === 0) return `${indent}<${node.name}${attributes}/>`;
  return `${indent}<${node.name}${attributes}>\n${node.children.map((child) => serialize(child, `${indent}  `)).join('\n')}\n${indent}</${node.name}>`;
}

const comment = fc
  .string({ unit: fc.constantFrom('a', ' ', 'b', '<', '&'), minLength: 1, maxLength: 10 })
  .map((value) => ({ comment: ` ${value.trim()} ` }));
const leaf = (name: string, text: fc.Arbitrary<string> = xmlText, attributeNames: readonly string[] = []): fc.Arbitrary<Node> =>
  fc.record({
    name: fc.constant(name),
    text,
    cdata: fc.boolean().map((useCdata) => useCdata),
    attributes: fc.subarray([...attributeNames]).chain((names) => fc.tuple(...names.map((attr) => attributeText.map((value): [string, string] => [attr, value])))),
    children: fc.constant([] as Node[]),
  }).map((node) => (node.cdata && (node.text.includes(']]>') || node.text === '') ? { ...node, cdata: false } : node));
const unknown = fc.oneof(leaf('note', xmlText, ['kind']), leaf('extra'), comment);

/** An element whose children are `parts` (each present or not, in order) with unknown nodes between them. */
function element(name: string, parts: Array<fc.Arbitrary<Node[]>>, attributeNames: readonly string[] = []): fc.Arbitrary<Node> {
  return fc
    .tuple(
      fc.tuple(...parts.map((part) => fc.oneof(fc.constant([] as Node[]), part))),
      fc.array(unknown, { maxLength: 2 }),
      fc.subarray([...attributeNames]),
      fc.nat(),
    )
    .map(([present, extras, attributes, seed]) => {
      const children = present.flat();
      extras.forEach((extra, i) => children.splice((seed + i * 7) % (children.length + 1), 0, extra));
      return { name, attributes: attributes.map((attr): [string, string] => [attr, 'x']), children };
    });
}
const one = (arb: fc.Arbitrary<Node>) => arb.map((node) => [node]);
/** A list container: its entries and unknown nodes in any order. */
const list = (name: string, entry: fc.Arbitrary<Node>) =>
  one(fc.array(fc.oneof({ weight: 3, arbitrary: entry }, { weight: 1, arbitrary: unknown }), { maxLength: 5 }).map((children): Node => ({ name, attributes: [], children })));
/** Entries directly under their parent, as remaining_tasks sit in quality_status. */
const repeated = (entry: fc.Arbitrary<Node>) => fc.array(entry, { minLength: 1, maxLength: 3 });

const nextStage = fc.oneof(fc.constantFrom('mission_planning', 'implementation', 'verification', 'complete', 'reviewing', 'handoff'), xmlText);

const workflow = element('workflow_checkpoint', [
  one(leaf('checkpoint_id')),
  one(leaf('timestamp')),
  one(element('workflow_state', [one(leaf('stage_completed')), one(leaf('next_stage', nextStage)), one(leaf('progress_percentage'))])),
  one(
    element('context_snapshot', [
      one(leaf('mission')),
      one(leaf('decomposition')),
      list('critical_decisions', leaf('decision', xmlText, ['id', 'by', 'owner'])),
      list('implementation_artifacts', leaf('artifact', filePath, ['status'])),
      one(element('quality_status', [one(leaf('verification_results')), repeated(leaf('remaining_tasks', xmlText, ['id', 'priority']))])),
    ]),
  ),
  one(element('resume_instructions', [one(leaf('next_step')), one(leaf('required_context')), one(leaf('validation_required'))])),
]);

const approval = element('approval_checkpoint', [
  one(leaf('checkpoint_id')),
  one(element('decision_required', [one(leaf('decision_type')), list('options', leaf('option', xmlText, ['id', 'pros', 'cons'])), one(leaf('recommendation'))])),
  one(element('workflow_continuation', [one(leaf('on_approval')), one(leaf('on_rejection'))])),
]);

const error = element('error_checkpoint', [
  one(leaf('checkpoint_id')),
  one(element('error_context', [one(leaf('error_type')), one(leaf('error_location')), repeated(leaf('partial_completion', xmlText, ['id']))])),
  one(element('recovery_strategy', [list('immediate_options', leaf('option', xmlText, ['priority'])), one(leaf('rollback_required'))])),
  one(element('resume_plan', [repeated(leaf('recovery_steps')), one(leaf('validation_steps')), one(leaf('continuation_point'))])),
]);

export const workflowDocument: fc.Arbitrary<string> = fc
  .tuple(fc.oneof(workflow, approval, error), fc.boolean(), fc.option(comment, { nil: undefined }))
  .map(([root, declaration, leading]) => {
    const prolog = `${declaration ? '<?xml version="1.0" encoding="UTF-8"?>\n' : ''}${leading === undefined ? '' : `${serialize(leading, '')}\n`}`;
    return `${prolog}${serialize(root, '')}\n`;
  });
