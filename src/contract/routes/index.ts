// Every route of /api/v1, as the contract states it: path, parameters and answers, in zod. The API
// serves them (src/api/v1/*-routes.ts add the handlers) and documents them (OpenAPI); the web UI's
// typed client (src/ui/app/api.ts) takes its paths, parameters and answers from the same objects.
import { delivery } from './delivery.ts';
import { deploymentState } from './deployment-state.ts';
import { drift } from './drift.ts';
import { compare } from './compare.ts';
import { environmentState, listEnvironments } from './environments.ts';
import { history } from './history.ts';
import { hostState, listHosts } from './hosts.ts';
import { notifications } from './notifications.ts';

export const API_ROUTES = { listEnvironments, environmentState, listHosts, hostState, history, compare, drift, deploymentState, delivery, notifications } as const;
