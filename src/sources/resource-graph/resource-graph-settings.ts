// The Azure Resource Graph poller's settings: sources to poll without Kubernetes, and the Azure
// Resource Manager endpoint (sovereign clouds).
import { httpsUrl, optionalText } from '../../config/setting-parsers.ts';
import type { Setting } from '../../config/setting.ts';

export const RESOURCE_GRAPH_SETTINGS = {
  argConfig: {
    flag: 'arg-config',
    group: 'sources',
    env: ['KALYPSO_ARG_CONFIG'],
    default: undefined,
    description: 'YAML/JSON list of Azure Resource Graph sources to poll without Kubernetes (fields as in the AzureResourceGraph spec, plus `name`).',
    parse: optionalText,
    shownDefault: '(none)',
  } satisfies Setting<string | undefined>,
  armEndpoint: {
    flag: 'arm-endpoint',
    group: 'sources',
    env: ['KALYPSO_ARM_ENDPOINT'],
    default: 'https://management.azure.com',
    description: 'Azure Resource Manager endpoint (sovereign clouds); the authority comes from `AZURE_AUTHORITY_HOST`.',
    parse: httpsUrl,
  } satisfies Setting<string>,
} as const;
