/** The local GitHub simulator: GitHub's GraphQL schema and REST shapes over an in-memory world. */
export { analyzeOperation, type QueryAnalysis } from './cost.js';
export { DEMO_TOKEN, demoFixture, demoWorld } from './demo.js';
export {
  type Fault,
  type FaultKind,
  type FaultMatch,
  FaultQueue,
  type FaultSpec,
  parseFault,
} from './faults.js';
export { type GraphQLResponse, handleGraphQL } from './graphql.js';
export { RateLimiter, type RateLimitResource, type RateLimitState, rateLimitHeaders } from './rate-limit.js';
export { paginate } from './resolver-kit.js';
export { SEARCH_RESULT_CAP } from './resolvers.js';
export { githubSchema, githubSchemaPath } from './schema.js';
export { DEFAULT_SORT, parseSearchQuery, searchIssues, tokenizeSearchQuery } from './search.js';
export {
  type RecordedRequest,
  readFixture,
  runSimulatorFromFixture,
  type Simulator,
  type SimulatorOptions,
  startSimulator,
  type WriteFaults,
  type WritePacing,
} from './server.js';
export { type GraphQLReply, postGraphQL } from './testing.js';
export * from './world.js';
