// Recursive-descent parser of string epilogues (grammar in frontend/ast.h).
#include <cctype>
#include <charconv>
#include <cstdio>
#include <string>
#include <utility>

#include "tilegraph/evg/frontend/ast.h"

namespace tg::evg::frontend {

namespace {

struct Token {
  enum class Kind { kName, kNumber, kSymbol, kSeparator, kEnd };
  Kind kind = Kind::kEnd;
  std::string text;
  SourcePosition position;
};

class Lexer {
 public:
  explicit Lexer(std::string_view source) : source_(source) { advance(); }

  const Token& peek() const { return token_; }
  Token take() {
    Token t = std::move(token_);
    advance();
    return t;
  }

 private:
  void advance() {
    // Skip blanks and comments; a newline or ';' separates statements.
    while (pos_ < source_.size()) {
      const char c = source_[pos_];
      if (c == '#') {
        while (pos_ < source_.size() && source_[pos_] != '\n') step();
      } else if (c == ' ' || c == '\t' || c == '\r') {
        step();
      } else {
        break;
      }
    }
    token_ = Token{};
    token_.position = {line_, column_};
    if (pos_ >= source_.size()) return;
    const char c = source_[pos_];
    const size_t start = pos_;
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      while (pos_ < source_.size() &&
             (std::isalnum(static_cast<unsigned char>(source_[pos_])) || source_[pos_] == '_')) {
        step();
      }
      token_.kind = Token::Kind::kName;
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      while (pos_ < source_.size() &&
             (std::isalnum(static_cast<unsigned char>(source_[pos_])) || source_[pos_] == '.' ||
              ((source_[pos_] == '+' || source_[pos_] == '-') &&
               (source_[pos_ - 1] == 'e' || source_[pos_ - 1] == 'E')))) {
        step();
      }
      token_.kind = Token::Kind::kNumber;
    } else if (c == '\n' || c == ';') {
      step();
      token_.kind = Token::Kind::kSeparator;
    } else {
      // A multi-byte UTF-8 character is one symbol, so that an error quotes all of it.
      step();
      while (static_cast<unsigned char>(c) >= 0xc0 && pos_ < source_.size() &&
             (static_cast<unsigned char>(source_[pos_]) & 0xc0) == 0x80) {
        step();
      }
      token_.kind = Token::Kind::kSymbol;
    }
    token_.text = std::string(source_.substr(start, pos_ - start));
  }

  void step() {
    if (source_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
  }

  std::string_view source_;
  size_t pos_ = 0;
  int line_ = 1, column_ = 1;
  Token token_;
};

std::string describe(const Token& t) {
  switch (t.kind) {
    case Token::Kind::kEnd: return "the end of the epilogue";
    case Token::Kind::kSeparator: return t.text == ";" ? "';'" : "the end of the line";
    default:
      if (t.text.size() == 1 && std::iscntrl(static_cast<unsigned char>(t.text[0]))) {
        char escaped[16];
        std::snprintf(escaped, sizeof escaped, "byte 0x%02x", static_cast<unsigned char>(t.text[0]));
        return escaped;
      }
      return "'" + t.text + "'";
  }
}

class Parser {
 public:
  explicit Parser(std::string_view source) : lexer_(source) {}

  Program program() {
    Program p;
    while (true) {
      while (lexer_.peek().kind == Token::Kind::kSeparator) lexer_.take();
      if (lexer_.peek().kind == Token::Kind::kEnd) break;
      p.statements.push_back(statement());
      const Token& next = lexer_.peek();
      if (next.kind != Token::Kind::kSeparator && next.kind != Token::Kind::kEnd) {
        throw FrontEndError(next.position, next.text, "expected ';' or a new line before " + describe(next));
      }
    }
    if (p.statements.empty()) throw FrontEndError({1, 1}, "", "empty epilogue: expected statements like 'D = acc'");
    return p;
  }

 private:
  Statement statement() {
    Token target = lexer_.take();
    if (target.kind != Token::Kind::kName) {
      throw FrontEndError(target.position, target.text,
                          "expected the name of an output or value, found " + describe(target));
    }
    Token eq = lexer_.take();
    if (eq.kind != Token::Kind::kSymbol || eq.text != "=") {
      throw FrontEndError(eq.position, eq.text, "expected '=' after '" + target.text + "', found " + describe(eq));
    }
    Statement s;
    s.target = target.text;
    s.position = target.position;
    s.value = expr();
    return s;
  }

  bool at_symbol(const char* symbol) const {
    return lexer_.peek().kind == Token::Kind::kSymbol && lexer_.peek().text == symbol;
  }

  void expect(const char* symbol, const std::string& context) {
    const Token t = lexer_.take();
    if (t.kind != Token::Kind::kSymbol || t.text != symbol) {
      throw FrontEndError(t.position, t.text,
                          std::string("expected '") + symbol + "' " + context + ", found " + describe(t));
    }
  }

  std::unique_ptr<Expr> binary(char op, SourcePosition position, std::unique_ptr<Expr> a, std::unique_ptr<Expr> b) {
    auto e = std::make_unique<Expr>();
    e->kind = Expr::Kind::kBinary;
    e->op = op;
    e->position = position;
    e->args.push_back(std::move(a));
    e->args.push_back(std::move(b));
    return e;
  }

  std::unique_ptr<Expr> expr() {
    std::unique_ptr<Expr> e = term();
    while (at_symbol("+") || at_symbol("-")) {
      const Token op = lexer_.take();
      e = binary(op.text[0], op.position, std::move(e), term());
    }
    return e;
  }

  std::unique_ptr<Expr> term() {
    std::unique_ptr<Expr> e = unary();
    while (at_symbol("*") || at_symbol("/")) {
      const Token op = lexer_.take();
      e = binary(op.text[0], op.position, std::move(e), unary());
    }
    return e;
  }

  std::unique_ptr<Expr> unary() {
    if (at_symbol("-")) {
      const Token minus = lexer_.take();
      auto e = std::make_unique<Expr>();
      e->kind = Expr::Kind::kNegate;
      e->position = minus.position;
      e->args.push_back(unary());
      return e;
    }
    return primary();
  }

  std::unique_ptr<Expr> primary() {
    Token t = lexer_.take();
    auto e = std::make_unique<Expr>();
    e->position = t.position;
    if (t.kind == Token::Kind::kNumber) {
      e->kind = Expr::Kind::kNumber;
      const char* end = t.text.data() + t.text.size();
      const auto [ptr, ec] = std::from_chars(t.text.data(), end, e->number);
      if (ec != std::errc() || ptr != end) {
        throw FrontEndError(t.position, t.text, "'" + t.text + "' is not a number (or does not fit in f32)");
      }
      return e;
    }
    if (t.kind == Token::Kind::kSymbol && t.text == "(") {
      std::unique_ptr<Expr> inner = expr();
      expect(")", "to close the '(' at column " + std::to_string(t.position.column));
      return inner;
    }
    if (t.kind != Token::Kind::kName) throw FrontEndError(t.position, t.text, "expected a value, found " + describe(t));
    e->name = t.text;
    if (at_symbol("[")) {
      lexer_.take();
      const Token index = lexer_.take();
      if (index.kind != Token::Kind::kName || (index.text != "row" && index.text != "col")) {
        throw FrontEndError(index.position, index.text,
                            "a vector is indexed by 'row' or 'col', found " + describe(index));
      }
      expect("]", "after '" + t.text + "[" + index.text + "'");
      e->kind = Expr::Kind::kIndex;
      e->index = index.text;
      return e;
    }
    if (at_symbol("(")) {
      const Token open = lexer_.take();
      e->kind = Expr::Kind::kCall;
      if (!at_symbol(")")) {
        e->args.push_back(expr());
        while (at_symbol(",")) {
          lexer_.take();
          e->args.push_back(expr());
        }
      }
      expect(")", "to close the call of '" + t.text + "' at column " + std::to_string(open.position.column));
      return e;
    }
    e->kind = Expr::Kind::kName;
    return e;
  }

  Lexer lexer_;
};

}  // namespace

Program parse_program(std::string_view source) { return Parser(source).program(); }

}  // namespace tg::evg::frontend
