/** sift's version, as package.json says (a unit test holds the two equal). */
export const SIFT_VERSION = '0.1.0';
