// Test kernel template whose `run` is a variable, not a function: calling it would jump into data.
extern "C" {
int run = 5;
}
