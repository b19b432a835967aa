#pragma once

#include <QString>

class QSyntaxHighlighter;
class QTextDocument;

namespace autocomp {

// Syntax highlighting for code and prompt text. Uses KF6 SyntaxHighlighting when it was found at build
// time (one definition repository for the app, the theme picked by the palette's lightness), otherwise
// the built-in highlighter.
class CodeHighlighter
{
public:
    // Replaces any highlighter on `document`. `language`: cpp, c, cuda, python, markdown, yaml (or a file
    // extension such as "cu", "py", "md"). Unknown languages get no highlighting. The highlighter is owned
    // by the document.
    static QSyntaxHighlighter *attach(QTextDocument *document, const QString &language);
    // The language a target's code is written in, by the target's name; "cpp" when unknown.
    static QString languageForTarget(const QString &target);
};

} // namespace autocomp
