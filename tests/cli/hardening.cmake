# The CLI against hostile or careless input: files that are not files or never end, numbers too
# large for their option, chat messages that spell control tokens.

add_test(NAME cli_refuse_text_files COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/refuse_text_files.sh $<TARGET_FILE:tilegraph-cli>)
set_tests_properties(cli_refuse_text_files PROPERTIES TIMEOUT 300)

# A number out of its option's range is an error, never clamped to the range or to the type (a
# seed of 10^23 is not 2^64 - 1), for every command; and only plain decimal is a number.
add_test(NAME cli_integer_options_out_of_range
         COMMAND sh -c "for args in 'run --seed 99999999999999999999999' 'run --tokens 99999999999999999999' 'run --top-k 2147483648' 'perplexity --ctx -99999999999999999999' 'demo --steps 99999999999999999999' 'gguf-gen -o /nonexistent/x.gguf --seed 18446744073709551616' 'gguf-gen -o /nonexistent/x.gguf --n-layer 2147483648' 'run --tokens 010' 'run --tokens 0x10'; do \"$1\" $args > /dev/null; echo \"exit status $?\"; done 2>&1"
                 sh $<TARGET_FILE:tilegraph-cli>)
set_tests_properties(cli_integer_options_out_of_range PROPERTIES PASS_REGULAR_EXPRESSION
                     "--seed: 99999999999999999999999 is out of range: expected 0 to 18446744073709551615\n.*\nexit status 2\n.*--tokens: 99999999999999999999 is out of range: expected 0 to 16777216\n.*\nexit status 2\n.*--top-k: 2147483648 is out of range: expected 0 to 2147483647\n.*\nexit status 2\n.*--ctx: -99999999999999999999 is out of range: expected 4 to 1048576\n.*\nexit status 2\n.*--steps: 99999999999999999999 is out of range: expected 0 to 4096\n.*\nexit status 2\n.*--seed: 18446744073709551616 is out of range: expected 0 to 18446744073709551615\n.*\nexit status 2\n.*--n-layer: 2147483648 is out of range: expected 1 to 2147483647\n.*\nexit status 2\n.*--tokens: '010': write it without leading zeros\n.*\nexit status 2\n.*--tokens: '0x10' is not a whole number\n.*\nexit status 2\n$")

# The user's message is text: its <s> and </s> are characters (byte tokens here), not BOS (1) and
# EOS (2); only the template's markup can give control tokens (unit tests: test_chat_tokens.cpp).
add_test(NAME cli_run_chat_text_is_not_control_tokens
         COMMAND $<TARGET_FILE:tilegraph-cli> run --chat "<s>[INST]</s>" --chat-template llama2 --tokens 1)
set_tests_properties(cli_run_chat_text_is_not_control_tokens PROPERTIES PASS_REGULAR_EXPRESSION
                     "prompt ids \\(30\\): +1 259 94 76 81 86 87 96 259 63 118 65 94 76 81 86 87 96 63 50 118 65 259 94 50 76 81 86 87 96\n")
