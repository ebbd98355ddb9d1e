export { ProfilesModule } from './profiles.module';
export {
  ProfileService,
  PROFILE_NAME,
  type BrowserState,
  type LoadedProfile,
  type ProfileView,
} from './profile.service';
