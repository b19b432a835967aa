#pragma once

#include <QList>
#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>

namespace autocomp {

// A small rule-based highlighter for the languages the workbench shows, used where KF6
// SyntaxHighlighting is not installed.
class BuiltinHighlighter : public QSyntaxHighlighter
{
    Q_OBJECT
public:
    enum Language { Cpp, Cuda, Python, Markdown, Yaml };

    BuiltinHighlighter(QTextDocument *document, Language language, bool darkPalette);

    Language language() const { return m_language; }

protected:
    void highlightBlock(const QString &text) override;

private:
    enum BlockState { NoState = -1, InBlockComment = 1, InTripleDouble, InTripleSingle, InFence };
    struct Rule
    {
        QRegularExpression pattern;
        QTextCharFormat format;
        int group = 0;
    };

    void addRule(const QString &pattern, const QTextCharFormat &format, int group = 0);
    void addKeywords(const QStringList &words, const QTextCharFormat &format);
    void setupCLike(bool cuda);
    void setupPython();
    void setupMarkdown();
    void setupYaml();
    // Highlights a construct spanning lines between `open` and `close`; returns true when it is still open.
    bool highlightSpan(const QString &text, const QString &open, const QString &close, int state,
                       const QTextCharFormat &format);

    Language m_language;
    QList<Rule> m_rules;
    QTextCharFormat m_keyword;
    QTextCharFormat m_type;
    QTextCharFormat m_string;
    QTextCharFormat m_comment;
    QTextCharFormat m_preprocessor;
    QTextCharFormat m_number;
    QTextCharFormat m_heading;
    QTextCharFormat m_emphasis;
    QTextCharFormat m_code;
    QTextCharFormat m_key;
};

} // namespace autocomp
