import { IsString, Matches } from 'class-validator';

/** POST /v1/profiles: a new, empty browser profile of the caller's. */
export class CreateProfileDto {
  /** 1 to 64 letters, digits, `_`, `.` or `-`; unique among the caller's profiles. */
  @IsString()
  @Matches(/^[A-Za-z0-9_.-]{1,64}$/, {
    message: 'name must be 1 to 64 letters, digits, "_", "." or "-"',
  })
  name: string;
}
