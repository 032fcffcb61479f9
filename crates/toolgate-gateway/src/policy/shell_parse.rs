//! A shell command line as the programs it runs, for `[[policy.rules]]`: every simple
//! command's argv (quotes and escapes removed, as the shell would), each program's basename
//! (through wrappers such as `env`, `xargs`, `busybox`, `find -exec`) and whether the line
//! holds something no static reading can follow (`facts.shell_dynamic`).
//!
//! Invariant: what cannot be read statically sets `dynamic`, never silently drops a
//! program: command substitution (`$(…)`, backticks, anywhere), `eval`, a shell or an
//! interpreter given code (`sh -c`, `bash` reading stdin, `python -c`, `env -S`), and an
//! expansion, glob or brace in a program's position (`$x -rf`, `/bin/r?`, `{rm,-rf,x}`).
//! The parse errs towards seeing more programs (a here-document's body is read as
//! commands), never fewer. It is a reading of the text, not a sandbox: a program may still
//! run others (`make`, `git` aliases, `awk`'s `system`).

/// What a shell command line runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ShellFacts {
    /// Every simple command's words, after quote removal, in order (substitutions first).
    pub argv: Vec<Vec<String>>,
    /// The basename of every program run, each once, in order of first appearance.
    pub executables: Vec<String>,
    /// The line holds a construct that defeats static reading.
    pub dynamic: bool,
}

/// Substitutions nest deeper than this only to hide something: the line is dynamic.
const MAX_DEPTH: usize = 8;

pub(crate) fn parse(command: &str) -> ShellFacts {
    let mut facts = ShellFacts::default();
    parse_into(command, 0, &mut facts);
    facts
}

fn parse_into(command: &str, depth: usize, facts: &mut ShellFacts) {
    if depth > MAX_DEPTH {
        facts.dynamic = true;
        return;
    }
    let tokens = Lexer::new(command, depth, facts).run();
    let mut simple: Vec<Word> = Vec::new();
    let mut redirect = false;
    for token in tokens {
        match token {
            // A redirection's target is not an argument (a substitution in it was read
            // by the lexer).
            Token::Word(_) if redirect => redirect = false,
            Token::Word(w) => simple.push(w),
            Token::Redirect => redirect = true,
            Token::Separator => {
                redirect = false;
                command_facts(std::mem::take(&mut simple), depth, facts);
            }
        }
    }
    command_facts(simple, depth, facts);
}

/// One word after quote removal.
#[derive(Debug, Clone, Default)]
struct Word {
    text: String,
    /// An unquoted or double-quoted `$name`, `${…}` or `$((…))`.
    expands: bool,
    /// An unquoted `*`, `?`, `[` or a `{` that may brace-expand.
    globs: bool,
    /// Some part of it was quoted or escaped (so `2` in `'2'>x` is not a descriptor).
    quoted: bool,
}

impl Word {
    /// Its value cannot be known without running the shell.
    fn opaque(&self) -> bool {
        self.expands || self.globs
    }
}

enum Token {
    Word(Word),
    Separator,
    Redirect,
}

struct Lexer<'f> {
    chars: Vec<char>,
    i: usize,
    depth: usize,
    facts: &'f mut ShellFacts,
    tokens: Vec<Token>,
    word: Option<Word>,
}

impl<'f> Lexer<'f> {
    fn new(text: &str, depth: usize, facts: &'f mut ShellFacts) -> Self {
        Lexer {
            chars: text.chars().collect(),
            i: 0,
            depth,
            facts,
            tokens: Vec::new(),
            word: None,
        }
    }

    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.i + ahead).copied()
    }

    fn word(&mut self) -> &mut Word {
        self.word.get_or_insert_with(Word::default)
    }

    fn end_word(&mut self) {
        if let Some(w) = self.word.take() {
            self.tokens.push(Token::Word(w));
        }
    }

    fn run(mut self) -> Vec<Token> {
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\r' => {
                    self.end_word();
                    self.i += 1;
                }
                '\n' | ';' | '|' | '(' | ')' => {
                    self.end_word();
                    self.tokens.push(Token::Separator);
                    self.i += 1;
                }
                '&' if self.peek(1) == Some('>') => {
                    self.end_word();
                    self.tokens.push(Token::Redirect);
                    self.i += 2;
                    self.skip_redirect_chars();
                }
                '&' => {
                    self.end_word();
                    self.tokens.push(Token::Separator);
                    self.i += 1;
                }
                '<' | '>' => {
                    // `2>x`: digits just before are the descriptor, not a word.
                    if self
                        .word
                        .as_ref()
                        .is_some_and(|w| !w.quoted && w.text.chars().all(|c| c.is_ascii_digit()))
                    {
                        self.word = None;
                    }
                    self.end_word();
                    self.tokens.push(Token::Redirect);
                    self.i += 1;
                    self.skip_redirect_chars();
                }
                '#' if self.word.is_none() => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.i += 1;
                    }
                }
                '\\' => {
                    self.i += 1;
                    match self.peek(0) {
                        Some('\n') => self.i += 1,
                        Some(c) => {
                            let w = self.word();
                            w.text.push(c);
                            w.quoted = true;
                            self.i += 1;
                        }
                        None => {}
                    }
                }
                '\'' => {
                    self.i += 1;
                    let w = self.word();
                    w.quoted = true;
                    let end = self.find('\'');
                    let text: String = self.chars[self.i..end].iter().collect();
                    self.word().text.push_str(&text);
                    self.i = (end + 1).min(self.chars.len());
                }
                '"' => {
                    self.i += 1;
                    self.word().quoted = true;
                    self.double_quoted();
                }
                '$' => self.dollar(),
                '`' => self.backtick(),
                '*' | '?' | '[' => {
                    let w = self.word();
                    w.globs = true;
                    w.text.push(c);
                    self.i += 1;
                }
                '{' => {
                    // Brace expansion needs a `,` or `..` before the closing brace; a
                    // bounded look so a line of `{` stays linear.
                    let body = self.chars[self.i + 1..]
                        .iter()
                        .take(256)
                        .take_while(|c| **c != '}' && !c.is_whitespace());
                    let mut prev = ' ';
                    let mut expands = false;
                    for &b in body {
                        expands |= b == ',' || (b == '.' && prev == '.');
                        prev = b;
                    }
                    let w = self.word();
                    w.globs |= expands;
                    w.text.push(c);
                    self.i += 1;
                }
                _ => {
                    self.word().text.push(c);
                    self.i += 1;
                }
            }
        }
        self.end_word();
        self.tokens
    }

    fn skip_redirect_chars(&mut self) {
        while self
            .peek(0)
            .is_some_and(|c| matches!(c, '<' | '>' | '&' | '|' | '-'))
        {
            self.i += 1;
        }
    }

    /// The index of the next `c` from here (or the end).
    fn find(&self, c: char) -> usize {
        self.chars[self.i..]
            .iter()
            .position(|&x| x == c)
            .map_or(self.chars.len(), |p| self.i + p)
    }

    fn double_quoted(&mut self) {
        while let Some(c) = self.peek(0) {
            match c {
                '"' => {
                    self.i += 1;
                    return;
                }
                '\\' => {
                    match self.peek(1) {
                        Some('\n') => {}
                        Some(n @ ('$' | '`' | '"' | '\\')) => self.word().text.push(n),
                        Some(n) => {
                            let w = self.word();
                            w.text.push('\\');
                            w.text.push(n);
                        }
                        None => self.word().text.push('\\'),
                    }
                    self.i += 2;
                }
                '$' => self.dollar(),
                '`' => self.backtick(),
                _ => {
                    self.word().text.push(c);
                    self.i += 1;
                }
            }
        }
    }

    /// `$'…'`, `$(…)`, `$((…))`, `${…}`, `$name`, or a plain `$`.
    fn dollar(&mut self) {
        match self.peek(1) {
            Some('\'') => {
                self.i += 2;
                self.word().quoted = true;
                self.ansi_c();
            }
            Some('(') if self.peek(2) == Some('(') => {
                let start = self.i;
                let end = self.matching_paren(self.i + 1);
                self.push_raw(start, end);
                self.word().expands = true;
            }
            Some('(') => {
                let start = self.i;
                let end = self.matching_paren(self.i + 1);
                let closed = end > start + 2 && self.chars.get(end - 1) == Some(&')');
                let inner_end = if closed { end - 1 } else { end };
                let inner: String = self.chars[start + 2..inner_end.max(start + 2)]
                    .iter()
                    .collect();
                self.substitute(&inner);
                self.push_raw(start, end);
            }
            Some('{') => {
                let start = self.i;
                self.i += 1;
                let end = self.find('}') + 1;
                self.push_raw(start, end.min(self.chars.len()));
                self.word().expands = true;
            }
            Some(c) if c.is_ascii_alphanumeric() || "_@*#?$!-".contains(c) => {
                let start = self.i;
                self.i += 1;
                if c.is_ascii_alphabetic() || c == '_' {
                    while self
                        .peek(0)
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                    {
                        self.i += 1;
                    }
                } else {
                    self.i += 1;
                }
                let end = self.i;
                self.i = start;
                self.push_raw(start, end);
                self.word().expands = true;
            }
            _ => {
                self.word().text.push('$');
                self.i += 1;
            }
        }
    }

    /// Appends `chars[start..end]` as written and moves past it.
    fn push_raw(&mut self, start: usize, end: usize) {
        let end = end.min(self.chars.len());
        let text: String = self.chars[start..end].iter().collect();
        self.word().text.push_str(&text);
        self.i = end;
    }

    /// The index just past the `)` matching the `(` at `open`, skipping quotes.
    fn matching_paren(&self, open: usize) -> usize {
        let mut depth = 0usize;
        let mut j = open;
        while let Some(&c) = self.chars.get(j) {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return j + 1;
                    }
                }
                '\\' => j += 1,
                '\'' => {
                    j += 1;
                    while self.chars.get(j).is_some_and(|&c| c != '\'') {
                        j += 1;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        self.chars.len()
    }

    fn backtick(&mut self) {
        let start = self.i;
        self.i += 1;
        let mut inner = String::new();
        while let Some(c) = self.peek(0) {
            self.i += 1;
            match c {
                '`' => break,
                '\\' => {
                    if let Some(n) = self.peek(0) {
                        if !matches!(n, '`' | '\\' | '$') {
                            inner.push('\\');
                        }
                        inner.push(n);
                        self.i += 1;
                    }
                }
                _ => inner.push(c),
            }
        }
        self.substitute(&inner);
        let end = self.i;
        self.i = start;
        self.push_raw(start, end);
    }

    /// A command substitution: its commands are read too, and the line is dynamic.
    fn substitute(&mut self, inner: &str) {
        self.facts.dynamic = true;
        self.word().expands = true;
        parse_into(inner, self.depth + 1, self.facts);
    }

    /// `$'…'` with its escapes decoded (`$'\x72m'` is `rm`).
    fn ansi_c(&mut self) {
        while let Some(c) = self.peek(0) {
            self.i += 1;
            match c {
                '\'' => return,
                '\\' => {
                    let Some(e) = self.peek(0) else { return };
                    self.i += 1;
                    let decoded = match e {
                        'n' => Some('\n'),
                        't' => Some('\t'),
                        'r' => Some('\r'),
                        'a' => Some('\u{7}'),
                        'b' => Some('\u{8}'),
                        'e' | 'E' => Some('\u{1b}'),
                        'f' => Some('\u{c}'),
                        'v' => Some('\u{b}'),
                        'x' => self.radix_char(16, 2),
                        'u' => self.radix_char(16, 4),
                        'U' => self.radix_char(16, 8),
                        '0'..='7' => {
                            self.i -= 1;
                            self.radix_char(8, 3)
                        }
                        'c' => {
                            self.i += 1;
                            None
                        }
                        other => Some(other),
                    };
                    if let Some(d) = decoded {
                        self.word().text.push(d);
                    }
                }
                _ => self.word().text.push(c),
            }
        }
    }

    fn radix_char(&mut self, radix: u32, max: usize) -> Option<char> {
        let mut value = 0u32;
        let mut n = 0;
        while n < max {
            match self.peek(0).and_then(|c| c.to_digit(radix)) {
                Some(d) => {
                    value = value.saturating_mul(radix).saturating_add(d);
                    self.i += 1;
                    n += 1;
                }
                None => break,
            }
        }
        if n == 0 { None } else { char::from_u32(value) }
    }
}

/// Words that open or close a compound command; the program comes after them.
const RESERVED: [&str; 13] = [
    "!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "coproc",
];

/// Programs and builtins that run a string they are given as shell code, or a shell that
/// reads its commands from stdin (`su`, `script`).
const RUN_STRINGS: [&str; 7] = ["eval", "watch", "trap", "alias", "su", "sg", "script"];

/// Wrappers whose `-c` / `--command` option is shell code (`flock -c "rm x" f`).
const CODE_WRAPPERS: [&str; 2] = ["flock", "runuser"];

/// Shells: with `-c` (or reading stdin) they run code the line only carries as data.
const SHELLS: [&str; 10] = [
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "csh", "tcsh",
];

/// Interpreters and the options that hand them code to run.
const INTERPRETERS: [(&str, &[&str]); 8] = [
    ("python", &["-c"]),
    ("perl", &["-e", "-E"]),
    ("ruby", &["-e"]),
    ("node", &["-e", "--eval", "-p", "--print"]),
    ("nodejs", &["-e", "--eval", "-p", "--print"]),
    ("php", &["-r"]),
    ("lua", &["-e"]),
    ("osascript", &["-e"]),
];

/// Programs that run the rest of their words as another program: their options that take
/// a separate value, and how many plain words come before the program.
const WRAPPERS: [(&str, &[&str], usize); 36] = [
    ("command", &[], 0),
    ("builtin", &[], 0),
    ("exec", &["-a"], 0),
    ("nohup", &[], 0),
    ("setsid", &[], 0),
    ("busybox", &[], 0),
    ("env", &["-u", "-C", "--unset", "--chdir"], 0),
    (
        "sudo",
        &[
            "-u", "-g", "-C", "-h", "-p", "-r", "-t", "-U", "-D", "-R", "-T",
        ],
        0,
    ),
    ("doas", &["-u", "-C"], 0),
    (
        "xargs",
        &[
            "-I",
            "-L",
            "-n",
            "-P",
            "-s",
            "-d",
            "-E",
            "-a",
            "--max-args",
            "--max-procs",
            "--delimiter",
            "--arg-file",
            "--max-chars",
            "--max-lines",
            "--eof",
            "--replace",
            "--process-slot-var",
        ],
        0,
    ),
    ("nice", &["-n", "--adjustment"], 0),
    (
        "ionice",
        &["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"],
        0,
    ),
    ("timeout", &["-s", "-k", "--signal", "--kill-after"], 1),
    ("stdbuf", &["-i", "-o", "-e"], 0),
    ("chroot", &["--userspec", "--groups"], 1),
    ("taskset", &[], 1),
    ("chrt", &[], 1),
    ("unshare", &[], 0),
    ("time", &["-f", "-o", "--format", "--output"], 0),
    (
        "flock",
        &["-w", "-E", "--timeout", "--conflict-exit-code"],
        1,
    ),
    (
        "strace",
        &[
            "-o", "-e", "-p", "-s", "-u", "-E", "-P", "-a", "-b", "-I", "-X",
        ],
        0,
    ),
    ("ltrace", &["-o", "-e", "-p", "-s", "-u", "-n", "-a"], 0),
    ("valgrind", &[], 0),
    ("fakeroot", &["-l", "-s", "-i", "--lib", "--faked"], 0),
    ("firejail", &[], 0),
    (
        "systemd-run",
        &[
            "-p",
            "-u",
            "--unit",
            "--property",
            "-E",
            "--setenv",
            "--uid",
            "--gid",
        ],
        0,
    ),
    ("setpriv", &[], 0),
    ("unbuffer", &[], 0),
    ("pkexec", &["--user"], 0),
    ("faketime", &["-f"], 1),
    ("torsocks", &["-a", "-P", "-u", "-p"], 0),
    ("proxychains", &["-f"], 0),
    ("proxychains4", &["-f"], 0),
    ("nsenter", &["-t", "--target"], 0),
    ("chronic", &[], 0),
    ("runuser", &["-u", "-g", "-G", "--user", "--group"], 0),
];

/// Builtins that change how a program is looked up, not programs themselves.
const LOOKUP_BUILTINS: [&str; 3] = ["command", "builtin", "exec"];

fn basename(text: &str) -> &str {
    text.rsplit('/').next().unwrap_or(text)
}

fn is_assignment(w: &Word) -> bool {
    match w.text.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

fn push_executable(facts: &mut ShellFacts, name: &str) {
    if !name.is_empty() && !facts.executables.iter().any(|e| e == name) {
        facts.executables.push(name.to_owned());
    }
}

/// Records one simple command: its argv, and the programs it runs.
fn command_facts(words: Vec<Word>, depth: usize, facts: &mut ShellFacts) {
    if words.is_empty() {
        return;
    }
    facts
        .argv
        .push(words.iter().map(|w| w.text.clone()).collect());
    let mut rest = words.as_slice();
    // Leading keywords and assignments; `for`/`case`/`select` heads name no program.
    loop {
        match rest.split_first() {
            Some((w, tail)) if !w.quoted && RESERVED.contains(&w.text.as_str()) => rest = tail,
            Some((w, tail)) if is_assignment(w) => rest = tail,
            Some((w, _))
                if !w.quoted
                    && matches!(w.text.as_str(), "for" | "case" | "select" | "function") =>
            {
                return;
            }
            _ => break,
        }
    }
    program(rest, depth, facts);
}

/// `words[0]` is in a program's position.
fn program(words: &[Word], depth: usize, facts: &mut ShellFacts) {
    let Some((first, args)) = words.split_first() else {
        return;
    };
    // `[ -f x ]` and `[[ … ]]` are tests, not globs.
    if first.opaque() && first.text != "[" && first.text != "[[" {
        facts.dynamic = true;
        return;
    }
    let name = basename(&first.text);
    if depth > MAX_DEPTH {
        facts.dynamic = true;
        return;
    }
    if !LOOKUP_BUILTINS.contains(&name) {
        push_executable(facts, name);
    }
    let runs_code = CODE_WRAPPERS.contains(&name)
        && args
            .iter()
            .any(|a| a.text == "-c" || a.text == "--command" || a.text.starts_with("--command="));
    if RUN_STRINGS.contains(&name) || runs_code {
        facts.dynamic = true;
    }
    let version_stripped = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    if SHELLS.contains(&name) {
        shell(args, depth, facts);
    } else if let Some((_, code_opts)) = INTERPRETERS.iter().find(|(n, _)| *n == version_stripped) {
        if gives_code(args, code_opts) {
            facts.dynamic = true;
        }
    } else if name == "find" {
        find(args, depth, facts);
    } else if let Some((_, with_value, plain)) = WRAPPERS.iter().find(|(n, _, _)| *n == name) {
        wrapped(name, args, with_value, *plain, depth, facts);
    }
}

/// Whether an interpreter is handed code: a code option anywhere (`-c`, `-e`, `--eval`,
/// since an option's value may hide it from a scan that stops at the script), or in a
/// cluster before the script (`perl -ne`, `python -Bc`).
fn gives_code(args: &[Word], code_opts: &[&str]) -> bool {
    let exact = args.iter().any(|a| {
        code_opts
            .iter()
            .any(|o| a.text == *o || a.text.starts_with(&format!("{o}=")))
    });
    let clustered = args
        .iter()
        .take_while(|a| a.text.starts_with('-') && a.text != "-" && a.text != "--")
        .filter(|a| !a.text.starts_with("--"))
        .any(|a| {
            code_opts
                .iter()
                .filter(|o| o.len() == 2)
                .any(|o| a.text[1..].contains(&o[1..]))
        });
    exact || clustered
}

fn wrapped(
    name: &str,
    args: &[Word],
    with_value: &[&str],
    mut plain: usize,
    depth: usize,
    facts: &mut ShellFacts,
) {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let t = w.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if t.starts_with('-') && t.len() > 1 {
            if name == "env"
                && (t == "-S" || t.starts_with("--split-string") || t.starts_with("-S"))
            {
                facts.dynamic = true;
                return;
            }
            if name == "sudo" && matches!(t, "-s" | "-i" | "--shell" | "--login") {
                // A shell: reading stdin, or given the rest as code.
                facts.dynamic = true;
                return;
            }
            i += if with_value.contains(&t) { 2 } else { 1 };
            continue;
        }
        if name == "env" && is_assignment(w) {
            i += 1;
            continue;
        }
        if plain > 0 {
            plain -= 1;
            i += 1;
            continue;
        }
        break;
    }
    let rest = args.get(i..).unwrap_or_default();
    if rest.is_empty() && name == "xargs" {
        push_executable(facts, "echo");
    }
    program(rest, depth + 1, facts);
}

/// `find … -exec PROGRAM … ;` (and `-execdir`, `-ok`, `-okdir`).
fn find(args: &[Word], depth: usize, facts: &mut ShellFacts) {
    let mut i = 0;
    while i < args.len() {
        if matches!(
            args[i].text.as_str(),
            "-exec" | "-execdir" | "-ok" | "-okdir"
        ) {
            let start = i + 1;
            let end = args[start..]
                .iter()
                .position(|w| w.text == ";" || w.text == "+")
                .map_or(args.len(), |p| start + p);
            program(&args[start..end], depth + 1, facts);
            i = end;
        }
        i += 1;
    }
}

/// A shell: code in `-c STRING` is read (and the line is dynamic); a shell with no script
/// operand reads its commands from stdin, which no rule sees.
fn shell(args: &[Word], depth: usize, facts: &mut ShellFacts) {
    let mut i = 0;
    let mut code = false;
    while let Some(w) = args.get(i) {
        let t = w.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 {
            if !t.starts_with("--") && t[1..].contains('c') {
                code = true;
            }
            if t[1..].contains('s') && !t.starts_with("--") {
                facts.dynamic = true;
            }
            i += if matches!(t, "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file") {
                2
            } else {
                1
            };
            continue;
        }
        break;
    }
    match args.get(i) {
        Some(w) if code => {
            facts.dynamic = true;
            parse_into(&w.text, depth + 1, facts);
        }
        Some(_) => {}
        None => facts.dynamic = true,
    }
}
