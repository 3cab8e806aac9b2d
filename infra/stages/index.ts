import type { BaseStage, StageSettings } from '../settings';
import dev from './dev';
import prod from './prod';
import staging from './staging';

/** Each stage's committed settings, by stage (infra/settings.ts validates them at synth). */
export const STAGE_FILES: Record<BaseStage, StageSettings> = { dev, staging, prod };
