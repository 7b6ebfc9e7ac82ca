/**
 * GraphQL answers of profiles written without executing the operation. A REST lookup of a cached
 * profile writes bytes the profile keeps; a GraphQL lookup executed its selection over the
 * profile's records and serialised the result on every request (docs/decisions.md, "Ready
 * GraphQL answers kept with cached profiles"). For the common queries, `profile(name: $variable) { … }` or
 * `profiles(names: $variable) { … }` alone with a selection that only reads the profile, the
 * answer of each profile is a function of the profile and the selection: it is written once and
 * kept with the cached profile (`Profile.answerFor`), and later requests for the same selection
 * write that text. A profile the cache does not keep (most lookups of a large namespace) has its
 * answer written by the plan's writer (./answer-writer.ts) on each lookup, without execution.
 *
 * Each request still makes the service call the resolver makes (name checks, rate limit, profile
 * cache or database, edge tags): this plugin makes it before execution. Where a profile's answer
 * cannot be written (execution would add an error or wait) or the lookup failed, the operation
 * executes as it would have, its resolver handed the call's outcome instead of calling again
 * (../schema/profile-lookup.ts), so errors, nulls and masking are the engine's own. Answers are
 * kept only for profiles the profile cache keeps, and only answers without errors; a changed
 * profile is a new object (the cache evicts the old one), so a kept answer is never stale. The
 * answer of a profile is the same under `profile` and as an item of `profiles`, so the two share it.
 *
 * A selection qualifies when every field in it is one of PROFILE_FIELDS (fields computed from
 * the profile alone) and has no arguments and no directives; the root field has no directive and
 * its one argument is the operation's one variable, a String (`profile`) or a list of Strings
 * (`profiles`) without a default. Such a document has no string literal, so it is never given as
 * the parse of another text of its shape (./compiled-by-shape.ts).
 */
import {
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLSchema,
  getNamedType,
  getOperationAST,
  isCompositeType,
  isObjectType,
  Kind,
  type ListTypeNode,
  type NamedTypeNode,
  type OperationDefinitionNode,
  print,
  type SelectionSetNode,
  type TypeNode,
} from 'graphql';
import type { Plugin, PromiseOrValue } from 'graphql-yoga';
import { isNameList } from '../../names/name-id.js';
import type { Profile } from '../../profiles/profile.js';
import { CRYPTO_KEYS, SOCIAL_KEYS } from '../../profiles/record-types.js';
import type { GraphQLContext } from '../schema/context.js';
import { type MadeLookup, offerLookup, withdrawLookup } from '../schema/profile-lookup.js';
import { type AnswerWriter, answerWriter } from './answer-writer.js';

/**
 * The fields whose answers are computed from the profile object alone (no context but the
 * process's configuration, no database). test/profile-answers.test.ts fails when a field becomes
 * reachable from Profile that is not listed here: decide, then list it or leave it out.
 */
export const PROFILE_FIELDS: Readonly<Record<string, readonly string[]>> = {
  Profile: [
    'id',
    'name',
    'description',
    'image',
    'localPart',
    'namespace',
    'level',
    'length',
    'version',
    'avatarUrl',
    'attributes',
    'records',
    'record',
    'wallets',
    'wallet',
  ],
  Attribute: ['traitType', 'value'],
  AttributeValue: [],
  StringAttributeValue: ['value'],
  IntAttributeValue: ['value'],
  ProfileRecord: ['key', 'type', 'raw'],
  RecordEntry: ['key', 'value'],
  TextRecord: ['key', 'type', 'raw', 'value'],
  PhoneRecord: ['key', 'type', 'raw', 'value', 'numbers'],
  SocialRecord: ['key', 'type', 'raw', 'entries', ...SOCIAL_KEYS],
  CryptoRecord: ['key', 'type', 'raw', 'entries', ...CRYPTO_KEYS],
  MapRecord: ['key', 'type', 'raw', 'entries', 'entry'],
  GenericRecord: ['key', 'type', 'raw'],
  Wallet: ['symbol', 'address', 'chain', 'accountId'],
};

/** The root fields whose answers are written from the profiles they look up, by the argument that names them. */
const ROOT_FIELDS: Readonly<Record<string, { argument: string; list: boolean }>> = {
  profile: { argument: 'name', list: false },
  profiles: { argument: 'names', list: true },
};

/** How a qualifying operation is answered from kept or written answers. */
export interface AnswerPlan {
  /** The key of the root field in the result (its alias, or its name). */
  responseKey: string;
  /** The variable that holds the name (`profile`) or the list of names (`profiles`). */
  variable: string;
  /** Whether the root field is `profiles(names:)`: its answer is a list of profile answers, null where none. */
  list: boolean;
  /** The selection on each profile, printed with the fragments it uses: equal keys, equal answers. */
  key: string;
  /** Writes the answer of one profile without executing the operation (./answer-writer.ts). */
  write: AnswerWriter;
}

/** The plan of `operationName` in `document`, or undefined when its answers are not kept. */
export function answerPlanOf(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
): AnswerPlan | undefined {
  const operation = getOperationAST(document, operationName);
  if (operation == null || operation.operation !== 'query' || (operation.directives?.length ?? 0) > 0) return undefined;
  const variable = nameVariableOf(operation);
  const [root, ...others] = operation.selectionSet.selections;
  if (variable === undefined || root === undefined || others.length > 0 || root.kind !== Kind.FIELD) return undefined;
  const rootField = ROOT_FIELDS[root.name.value];
  if (rootField === undefined || rootField.list !== variable.list) return undefined;
  if ((root.directives?.length ?? 0) > 0 || root.selectionSet === undefined) return undefined;
  const [argument, ...more] = root.arguments ?? [];
  if (argument?.name.value !== rootField.argument || more.length > 0) return undefined;
  if (argument.value.kind !== Kind.VARIABLE || argument.value.name.value !== variable.name) return undefined;
  const profileType = schema.getType('Profile');
  if (!isObjectType(profileType)) return undefined;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const used = new Set<string>();
  if (!readsProfileOnly(schema, root.selectionSet, profileType, fragments, used)) return undefined;
  const key = [
    print(root.selectionSet),
    ...[...used].sort().map((name) => print(fragments.get(name) as FragmentDefinitionNode)),
  ].join('\n');
  const written = { schema, operation, fragments: Object.fromEntries(fragments) };
  return {
    responseKey: root.alias?.value ?? root.name.value,
    variable: variable.name,
    list: rootField.list,
    key,
    write: answerWriter(written, profileType, root),
  };
}

/**
 * The operation's one variable, when it is a String or a list of Strings (nullable or not)
 * without a default; validation has checked that its use fits the argument.
 */
function nameVariableOf(operation: OperationDefinitionNode): { name: string; list: boolean } | undefined {
  const [definition, ...others] = operation.variableDefinitions ?? [];
  if (definition === undefined || others.length > 0 || definition.defaultValue !== undefined) return undefined;
  if ((definition.directives?.length ?? 0) > 0) return undefined;
  const outer = nullableOf(definition.type);
  const list = outer.kind === Kind.LIST_TYPE;
  const named = list ? nullableOf(outer.type) : outer;
  if (named.kind !== Kind.NAMED_TYPE || named.name.value !== 'String') return undefined;
  return { name: definition.variable.name.value, list };
}

function nullableOf(type: TypeNode): NamedTypeNode | ListTypeNode {
  return type.kind === Kind.NON_NULL_TYPE ? type.type : type;
}

/** Whether every field of `selectionSet` (on `parent`) is a profile field without arguments or directives. */
function readsProfileOnly(
  schema: GraphQLSchema,
  selectionSet: SelectionSetNode,
  parent: GraphQLCompositeType,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  used: Set<string>,
): boolean {
  for (const selection of selectionSet.selections) {
    if ((selection.directives?.length ?? 0) > 0) return false;
    if (selection.kind === Kind.FIELD) {
      if (!fieldReadsProfileOnly(schema, selection, parent, fragments, used)) return false;
      continue;
    }
    const fragment = selection.kind === Kind.FRAGMENT_SPREAD ? fragments.get(selection.name.value) : selection;
    if (fragment === undefined || (fragment.directives?.length ?? 0) > 0) return false;
    if (selection.kind === Kind.FRAGMENT_SPREAD) {
      // A fragment spread twice is read once; one that spreads itself is invalid and never executes.
      if (used.has(selection.name.value)) continue;
      used.add(selection.name.value);
    }
    const condition = fragment.typeCondition === undefined ? parent : schema.getType(fragment.typeCondition.name.value);
    if (!isCompositeType(condition)) return false;
    if (!readsProfileOnly(schema, fragment.selectionSet, condition, fragments, used)) return false;
  }
  return true;
}

function fieldReadsProfileOnly(
  schema: GraphQLSchema,
  field: FieldNode,
  parent: GraphQLCompositeType,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  used: Set<string>,
): boolean {
  if (field.name.value === '__typename') return true;
  if ((field.arguments?.length ?? 0) > 0 || !(PROFILE_FIELDS[parent.name]?.includes(field.name.value) ?? false)) {
    return false;
  }
  if (field.selectionSet === undefined) return true;
  const definition = 'getFields' in parent ? parent.getFields()[field.name.value] : undefined;
  const type = definition === undefined ? undefined : getNamedType(definition.type);
  return isCompositeType(type) && readsProfileOnly(schema, field.selectionSet, type, fragments, used);
}

/**
 * A kept answer in a result. Serialised by the result's `stringify` as its text; anything else
 * that serialises the result (a GET's ETag, a WebSocket message) gets the parsed value.
 */
class KeptAnswer {
  constructor(readonly text: string) {}

  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/** A result with its own serialiser, which Yoga's result processor uses (Yoga's `ExecutionResultWithSerializer`). */
type WrittenResult = ExecutionResult & { stringify(result: ExecutionResult): string };

/** The result of a kept answer: what the operation's execution would give, written as text. */
function answerResult(responseKey: string, text: string): WrittenResult {
  const answer = new KeptAnswer(text);
  const data = { [responseKey]: answer };
  const written = `{"data":{${JSON.stringify(responseKey)}:${text}}}`;
  return {
    data,
    // Yoga's result processor writes a result with its `stringify`. Should a plugin have changed
    // the result, it is written as any other.
    stringify: (result) =>
      result.data === data &&
      data[responseKey] === answer &&
      result.errors === undefined &&
      result.extensions === undefined
        ? written
        : JSON.stringify(result),
  };
}

type ExecuteFunction = (args: ExecutionArgs) => PromiseOrValue<ExecutionResult>;

/** The plugin, and which operations it answers. */
export interface ProfileAnswers {
  /** Goes after the plugins that choose the execute function (compiled execution): it wraps the one they chose. */
  plugin: Plugin;
  /**
   * Whether the operation has a plan: its answers are kept or written, and it executes only
   * where that fails. The execution plan (./execution-plan.ts) gives such operations the
   * `written-answer` path: no compiled path takes them, as a compiled query would run only
   * where writing fails, and cost its compilation and a place in the document cache.
   */
  plans(document: DocumentNode, operationName: string | null | undefined): boolean;
}

export function profileAnswers(schema: GraphQLSchema): ProfileAnswers {
  // By operation name; null for none (which differs from the name '', an operation no document has).
  const plans = new WeakMap<DocumentNode, Map<string | null, AnswerPlan | null>>();
  const planFor = (document: DocumentNode, operationName: string | null | undefined) => {
    let byOperation = plans.get(document);
    if (byOperation === undefined) {
      byOperation = new Map();
      plans.set(document, byOperation);
    }
    const name = operationName ?? null;
    let plan = byOperation.get(name);
    if (plan === undefined) {
      plan = answerPlanOf(schema, document, operationName) ?? null;
      byOperation.set(name, plan);
    }
    return plan;
  };
  const plugin: Plugin = {
    onExecute({ args, executeFn, setExecuteFn }) {
      const plan = planFor(args.document, args.operationName);
      if (plan === null) return;
      const value = args.variableValues?.[plan.variable];
      const execute = executeFn as ExecuteFunction;
      if (plan.list) {
        // A list variable given as one string is coerced to a list of one: execution answers it.
        if (!isNameList(value)) return;
        setExecuteFn((executionArgs) => answeredList(plan, value, executionArgs, execute));
      } else if (typeof value === 'string') {
        setExecuteFn((executionArgs) => answeredOne(plan, value, executionArgs, execute));
      }
    },
  };
  return { plugin, plans: (document, operationName) => planFor(document, operationName) !== null };
}

/** `profile(name:)`: the kept answer, else the written one (null for no profile), else execution. */
async function answeredOne(
  plan: AnswerPlan,
  name: string,
  args: ExecutionArgs,
  execute: ExecuteFunction,
): Promise<ExecutionResult> {
  const context = args.contextValue as GraphQLContext;
  const outcome = context.profiles.lookupProfile(context.serviceRequest, name);
  let profile: Profile | null | undefined;
  try {
    profile = (await outcome).value;
  } catch {
    // Left undefined: the resolver raises it again, and the engine answers it as it answers every error.
  }
  const text = profile == null ? (profile === null ? 'null' : undefined) : answerOf(plan, profile, context);
  if (text !== undefined) return answerResult(plan.responseKey, text);
  const result = await executeWith(context, { name, outcome }, args, execute);
  const answer = result.data?.[plan.responseKey];
  if (profile?.keptByCache === true && (result.errors?.length ?? 0) === 0 && answer != null) {
    profile.keepAnswer(plan.key, JSON.stringify(answer));
  }
  return result;
}

/**
 * `profiles(names:)`: each profile's kept or written answer, null where a name has none; when
 * one profile's answer cannot be written, the operation executes (with the lookup already made).
 */
async function answeredList(
  plan: AnswerPlan,
  names: readonly string[],
  args: ExecutionArgs,
  execute: ExecuteFunction,
): Promise<ExecutionResult> {
  const context = args.contextValue as GraphQLContext;
  const outcome = context.profiles.lookupProfiles(context.serviceRequest, names);
  let profiles: Array<Profile | null> | undefined;
  try {
    profiles = (await outcome).value;
  } catch {
    // As for one name: the resolver raises it again.
  }
  const text = profiles === undefined ? undefined : listAnswerOf(plan, profiles, context);
  if (text !== undefined) return answerResult(plan.responseKey, text);
  return executeWith(context, { names, outcome }, args, execute);
}

/** The list's answer; undefined where one profile's answer cannot be written. */
function listAnswerOf(
  plan: AnswerPlan,
  profiles: ReadonlyArray<Profile | null>,
  context: GraphQLContext,
): string | undefined {
  let text = '[';
  for (let i = 0; i < profiles.length; i += 1) {
    const profile = profiles[i];
    const answer = profile == null ? 'null' : answerOf(plan, profile, context);
    if (answer === undefined) return undefined;
    text += (i === 0 ? '' : ',') + answer;
  }
  return `${text}]`;
}

/** The profile's kept answer to the plan's selection, else the one written now (kept where the profile is). */
function answerOf(plan: AnswerPlan, profile: Profile, context: GraphQLContext): string | undefined {
  const kept = profile.answerFor(plan.key);
  if (kept !== undefined) return kept;
  const written = plan.write(profile, context);
  if (written !== undefined) profile.keepAnswer(plan.key, written);
  return written;
}

/** Executes the operation, its resolver handed the lookup made before execution. */
async function executeWith(
  context: GraphQLContext,
  lookup: MadeLookup,
  args: ExecutionArgs,
  execute: ExecuteFunction,
): Promise<ExecutionResult> {
  offerLookup(context, lookup);
  try {
    return await execute(args);
  } finally {
    withdrawLookup(context);
  }
}
