// The same name in a directory searched first.
#define ANSWER 7
