import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Caller } from '../pages/caller-policy';

/** The caller the AuthGuard resolved for this request. */
export const CurrentCaller = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): Caller => ctx.switchToHttp().getRequest<{ caller: Caller }>().caller,
);
