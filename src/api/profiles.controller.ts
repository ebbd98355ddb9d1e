import { Body, Controller, Delete, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiProperty, ApiResponse, ApiTags } from '@nestjs/swagger';
import { invalidRequest } from '../common/errors';
import type { Caller } from '../pages/caller-policy';
import { PROFILE_NAME, ProfileService, type ProfileView } from '../profiles';
import { ApiErrors } from './api-errors.decorator';
import { AuthGuard } from './auth.guard';
import { BodyLimit, SMALL_BODY } from './body-limit';
import { CurrentCaller } from './caller.decorator';
import { CreateProfileDto } from '../commands';

class ProfileViewDto implements ProfileView {
  @ApiProperty({ example: 'shop-login' }) name: string;
  @ApiProperty({ description: 'Whether a render has saved a browser state into it (profile.save).' })
  saved: boolean;
  @ApiProperty({ description: 'Bytes of the state it keeps (sealed at rest).' }) bytes: number;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

class ProfileListDto {
  @ApiProperty({ type: ProfileViewDto, isArray: true }) profiles: ProfileViewDto[];
}

class ProfileDeletedDto {
  @ApiProperty() deleted: boolean;
}

/** A profile's name in a path: the same rule as the body's. */
function nameOf(name: string): string {
  if (!PROFILE_NAME.test(name)) throw invalidRequest('name must be 1 to 64 letters, digits, "_", "." or "-"');
  return name;
}

/**
 * Browser profiles: a caller's named browser states (cookies, localStorage), saved by a render
 * with `profile: {name, save: true}` and used by later fetches, batches and crawls of the same
 * caller. Only their owner sees them; their contents are never shown.
 */
@ApiTags('profiles')
@ApiBearerAuth()
@Controller('v1/profiles')
@UseGuards(AuthGuard)
export class ProfilesController {
  constructor(private readonly profiles: ProfileService) {}

  /** Creates an empty profile; a render with `profile: {name, save: true}` fills it. */
  @BodyLimit(SMALL_BODY)
  @Post()
  @HttpCode(201)
  @ApiResponse({ status: 201, type: ProfileViewDto })
  @ApiErrors(400, 401, 409, 413, 415)
  create(@CurrentCaller() caller: Caller, @Body() body: CreateProfileDto): Promise<ProfileView> {
    return this.profiles.create(caller, body.name);
  }

  /** The caller's profiles, by name. */
  @Get()
  @ApiOkResponse({ type: ProfileListDto })
  @ApiErrors(401)
  async list(@CurrentCaller() caller: Caller): Promise<ProfileListDto> {
    return { profiles: await this.profiles.list(caller) };
  }

  @Get(':name')
  @ApiOkResponse({ type: ProfileViewDto })
  @ApiErrors(400, 401, 404)
  view(@CurrentCaller() caller: Caller, @Param('name') name: string): Promise<ProfileView> {
    return this.profiles.view(caller, nameOf(name));
  }

  /** Deletes the profile and the state it keeps. */
  @Delete(':name')
  @ApiOkResponse({ type: ProfileDeletedDto })
  @ApiErrors(400, 401, 404)
  async remove(@CurrentCaller() caller: Caller, @Param('name') name: string): Promise<ProfileDeletedDto> {
    await this.profiles.remove(caller, nameOf(name));
    return { deleted: true };
  }
}
